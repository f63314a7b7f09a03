import { expect } from 'vitest';
import { openStore } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/errors.ts';

/** The StoreError opening `dir` is refused with; fails the test if it opens. */
export function refusal(dir: string): StoreError {
  try {
    openStore(dir).close();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    return error as StoreError;
  }
  throw new Error('opened a data dir that should have been refused');
}
