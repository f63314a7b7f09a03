/** What a CLI test started (services, folders), undone after it: pass `runCleanups` to afterEach. */
export const cleanups: Array<() => Promise<void>> = [];
export async function runCleanups(): Promise<void> {
  for (const fn of cleanups.splice(0)) await fn();
}
