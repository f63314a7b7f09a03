/**
 * Makes `target[method]` throw once, as SQLite does on a full disk, then behave as before: a store
 * write whose transaction fails, for tests of what memory looks like after the rollback.
 */
export function failOnce<T extends object, K extends keyof T>(target: T, method: K): void {
  const original = (target[method] as (...args: unknown[]) => unknown).bind(target);
  let failed = false;
  target[method] = ((...args: unknown[]) => {
    if (!failed) {
      failed = true;
      throw new Error('SQLITE_FULL: database or disk is full');
    }
    return original(...args);
  }) as T[K];
}
