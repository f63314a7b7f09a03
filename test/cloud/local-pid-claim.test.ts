import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { readPid } from '../../src/cloud/local/executor-records.ts';
import { claimPidRecord, takePidRecord } from '../../src/cloud/local/pid-claim.ts';

/** The pid record as a claim: written only where none is; taken away whole before a launch. */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'boa-pidclaim-'));
  dirs.push(dir);
  return dir;
};
const record = (pid: number) => ({ pid, node: 'local-1', startedAt: 1000 * pid });

it('claims a rank no record names, and leaves no temporary file', () => {
  const dir = temp();
  expect(claimPidRecord(dir, 0, record(11))).toBeUndefined();
  expect(readPid(dir, 0)).toEqual(record(11));
  expect(existsSync(join(dir, '0.pid.claim.tmp'))).toBe(false);
});

it("returns another supervisor's record and keeps it; its own again is no conflict", () => {
  const dir = temp();
  claimPidRecord(dir, 0, record(11));
  expect(claimPidRecord(dir, 0, record(12))).toEqual(record(11));
  expect(readPid(dir, 0)).toEqual(record(11));
  expect(claimPidRecord(dir, 0, record(11))).toBeUndefined();
  // Another rank is another claim.
  expect(claimPidRecord(dir, 1, record(12))).toBeUndefined();
});

it('takes a record away whole, returning it; none there is none taken', () => {
  const dir = temp();
  expect(takePidRecord(dir, 0)).toBeUndefined();
  claimPidRecord(dir, 0, record(11));
  expect(takePidRecord(dir, 0)).toEqual(record(11));
  expect(existsSync(join(dir, '0.pid'))).toBe(false);
  expect(existsSync(join(dir, '0.pid.taken.tmp'))).toBe(false);
  // Put back as a claim, as a launch does for a live supervisor's.
  expect(claimPidRecord(dir, 0, record(11))).toBeUndefined();
  expect(readPid(dir, 0)).toEqual(record(11));
});
