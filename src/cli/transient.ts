import { CliError, EXIT } from './errors.ts';

/**
 * How long `jobs wait` and `jobs logs -f` keep asking a service that does not answer: boa restarting
 * (a Deployment's pod rescheduled, say) takes longer than one poll, and the jobs run on meanwhile.
 */
export const UNANSWERED_MS = 5 * 60_000;

/** boa restarting: no answer or a cut one (exit 3), or the 503 every request gets while it starts. */
export function isTransient(error: unknown): error is CliError {
  return (
    error instanceof CliError &&
    (error.exitCode === EXIT.unreachable ||
      (error.body !== undefined && /"code":"starting"/.test(error.body)))
  );
}
