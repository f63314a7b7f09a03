/** What went wrong writing a file, in words (an errno code alone says little): the CLI's and the scripts'. */
export function writeProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'its folder does not exist';
    case 'ENOTDIR':
      return 'a part of its path is a file, not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'a read-only file system';
    case 'EISDIR':
      return 'it is a folder; give a file name';
    default:
      return error.code ?? error.message;
  }
}
