/**
 * A data directory or database the service must not start on. `exitCode` 2 is a setting to fix
 * (`--data` names a file); 1 is state to repair (restore the backup, stop the other instance).
 */
export class StoreError extends Error {
  override name = 'StoreError';
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}
