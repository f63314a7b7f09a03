import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { errorBody } from './errors.ts';

/** The validator's answer to a body that does not parse: it says nothing of where or why. */
const HONO_MALFORMED = 'Malformed JSON in request body';

export function isMalformedJson(error: Error): boolean {
  return error instanceof HTTPException && error.status === 400 && error.message === HONO_MALFORMED;
}

/**
 * A 400 saying why the body is not JSON, in the parser's words (found trying the API with curl: `-d
 * '{class: "cifar10"}'` and an empty body were both answered "Malformed JSON in request body"). The
 * body is the one the validator read, cached by the request.
 */
export async function malformedJson(c: Context): Promise<Response> {
  const text = await c.req.text().catch(() => undefined);
  let why = 'it could not be read';
  if (text !== undefined && text.trim() === '') why = 'it is empty';
  else if (text !== undefined) {
    try {
      JSON.parse(text);
    } catch (error) {
      why = (error as Error).message;
    }
  }
  return c.json(
    errorBody(
      'invalid',
      `the body is not JSON (${why}): send one JSON object, its names and strings in double quotes (each route's fields: /openapi.json)`,
    ),
    400,
  );
}
