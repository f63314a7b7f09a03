/** A cloud call that failed for good: not retryable, or retried until the attempts ran out. */
export class CloudError extends Error {
  override name = 'CloudError';

  constructor(
    message: string,
    /** The AWS operation (or pool step) that failed, e.g. 'UpdateNodegroupConfig'. */
    readonly operation: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The AWS error name and message of anything thrown, for logs and error messages. */
export function describeError(error: unknown): { errorName: string; errorMessage: string } {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message };
  return { errorName: typeof error, errorMessage: String(error) };
}
