/**
 * How the CLI tells a job id from a job name: "12", "-1", "+3", "1.5" (trimmed) are ids, refused as
 * ids when not one, never looked up as names. A job name of this shape could never be named, so the
 * API refuses it at registration.
 */
const ID_LIKE = /^[-+]?\d+(\.\d*)?$/;

export function looksLikeJobId(ref: string): boolean {
  return ID_LIKE.test(ref.trim());
}

export const ID_LIKE_NAME_MESSAGE =
  'a job name must not read as a number (boa jobs cancel 1 means job id 1): add a letter, e.g. run-1';
