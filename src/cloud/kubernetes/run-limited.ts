/** Runs at most `limit` of the tasks at once; failures are returned, not thrown, so one bad job stops nothing. */
export async function runLimited(tasks: (() => Promise<void>)[], limit: number): Promise<unknown[]> {
  const errors: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++]!;
      await task().catch((error: unknown) => errors.push(error));
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return errors;
}
