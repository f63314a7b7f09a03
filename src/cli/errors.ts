/**
 * Exit codes a script can branch on. Every failure the CLI expects is a CliError: one line on stderr,
 * never a stack trace.
 */
export const EXIT = {
  ok: 0,
  /** The service answered with an error that is not the caller's input (404, 409, 5xx). */
  failed: 1,
  /** Bad input: a usage error, or the API refused the input (400, 422). */
  badInput: 2,
  unreachable: 3,
  unauthorized: 4,
  /** `jobs wait`: a job ended failed, cancelled or lost. */
  jobUnsuccessful: 5,
  /** `jobs wait`: the timeout passed with jobs still waiting or running. */
  timedOut: 6,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export class CliError extends Error {
  override name = 'CliError';
  constructor(
    message: string,
    readonly exitCode: ExitCode,
    /** The API's error body, printed unchanged to stdout with --json. */
    readonly body?: string,
  ) {
    super(message);
  }
}

/** A bad argument or option, found before any request is made. */
export function usageError(message: string): CliError {
  return new CliError(message, EXIT.badInput);
}
