import Database from 'better-sqlite3';

/**
 * Makes the next `times` transactions on `client` fail as SQLite does with `code` (an extended code such
 * as SQLITE_IOERR_WRITE), after their statements ran: each is rolled back, as SQLite rolls back a write
 * it could not finish, and then throws the SqliteError better-sqlite3 would. Later ones go through.
 */
export function failTransactions(client: Database.Database, code: string, message: string, times = 1): void {
  const real = client.transaction.bind(client);
  let left = times;
  client.transaction = ((fn: (...args: unknown[]) => unknown) =>
    real((...args: unknown[]) => {
      const result = fn(...args);
      if (left > 0) {
        left -= 1;
        throw new Database.SqliteError(message, code);
      }
      return result;
    })) as typeof client.transaction;
}
