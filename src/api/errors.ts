import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Logger } from 'pino';
import type { ZodError } from 'zod';
import { ServiceError } from '../service/errors.ts';
import { ProfileError } from '../core/profile.ts';
import { storeRefusal } from '../store/refusal.ts';
import { issueText } from '../core/issue-text.ts';
import { isMalformedJson, malformedJson } from './malformed-json.ts';

/** Every error body: {"error": {"code", "message", "field"?, ...details}}. */
export function errorBody(code: string, message: string, field?: string, details?: Record<string, unknown>) {
  return { error: { code, message, ...(field ? { field } : {}), ...(details ?? {}) } };
}

/** Validation failures name the first bad field by its path, e.g. `classes.0.epochs`. */
export function validationError(c: Context, error: ZodError) {
  const { message, field } = validationProblem(error);
  return c.json(errorBody('invalid', message, field), 400);
}

/** The issue a validation failure reports, its field's path and the message saying it. */
export function validationProblem(error: ZodError): {
  readonly issue: Issue | undefined;
  readonly field: string | undefined;
  readonly message: string;
} {
  // A misspelt field also leaves the right one missing: the unknown one says more ({"budget": 40}).
  const issue = plainIssue(error.issues);
  const path = issue?.path.map(String) ?? [];
  // An unknown field is itself the field to fix (its message lists the ones taken: strict.ts).
  if (issue?.code === 'unrecognized_keys') path.push(issue.keys[0]!);
  const field = path.join('.') || undefined;
  // Messages written for a field name it already ("gpuHoursPerHour is at most ..."); a header's in
  // its usual case ("Idempotency-Key is empty"), while the validator has its name in lower case.
  const named = field !== undefined && issue?.message.toLowerCase().startsWith(field.toLowerCase());
  const message = issue
    ? named
      ? issue.message
      : issue.code === 'unrecognized_keys'
        ? `${issue.path.length > 0 ? `${issue.path.join('.')}: ` : ''}${issue.message}`
        : `${field ?? 'body'}${issueText(issue)}`
    : 'invalid request';
  return { issue, field, message };
}

export type Issue = ZodError['issues'][number];

/**
 * The issue to report, in the schema's own terms: a misspelt field before the missing one it leaves; a
 * field's own bound before zod's safe-integer one (1e20 "must be <= 10000", not 2^53); a record key's
 * own message before zod's "Invalid key in record".
 */
function plainIssue(issues: readonly Issue[]): Issue | undefined {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown) return unknown;
  let first = issues[0];
  if (first?.code === 'too_big' && first.origin === 'int') {
    const at = first.path.join('.');
    first =
      issues.find((i) => i.code === 'too_big' && i.origin === 'number' && i.path.join('.') === at) ?? first;
  }
  if (first?.code === 'invalid_key' && first.issues[0])
    return { ...first.issues[0], path: first.path } as Issue;
  return first;
}

/** `storeFile`: the database's file, which the log names when it refuses a write. */
export function handleError(error: Error, c: Context, logger: Logger, storeFile: string) {
  if (error instanceof ServiceError) {
    return c.json(errorBody(error.code, error.message, error.field, error.details), error.status);
  }
  if (error instanceof ProfileError)
    return c.json(errorBody('invalid_profile', error.message, 'profile'), 400);
  // The validator's own answer is a bare "Unsupported Media Type" (curl -d sends form-urlencoded).
  if (error instanceof HTTPException && error.status === 415) {
    const sent = c.req.header('content-type');
    return c.json(
      errorBody(
        'unsupported_media_type',
        `the body must be JSON: send Content-Type: application/json (got ${sent ? `"${sent.slice(0, 100)}"` : 'none'})`,
      ),
      415,
    );
  }
  if (isMalformedJson(error)) return malformedJson(c);
  if (error instanceof HTTPException && error.status < 500) {
    return c.json(errorBody('invalid', error.message), error.status);
  }
  // A write the database refused (found in a failure-mode review: each was a 500 "internal error",
  // saying nothing an operator could act on). The write's transaction was rolled back.
  const refused = storeRefusal(error, storeFile);
  if (refused) {
    // A failing disk is an error to act on; a lock or a full disk passes once its cause is gone.
    const level = refused.code === 'store_io_error' ? 'error' : 'warn';
    logger[level](
      {
        event: refused.code,
        path: c.req.path,
        file: storeFile,
        sqliteCode: refused.sqliteCode,
        error: error.message,
      },
      'database refused a write',
    );
    return c.json(errorBody(refused.code, refused.message), 503);
  }
  logger.error(
    { event: 'api_error', path: c.req.path, error: error.message, stack: error.stack },
    'internal error',
  );
  return c.json(errorBody('internal', 'internal error; see the service log'), 500);
}
