/** A refusal the API maps to an HTTP status, naming the field at fault when there is one. */
export class ServiceError extends Error {
  override name = 'ServiceError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 422 | 429 | 503,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ServiceError(404, 'not_found', `${what} not found`);
