/**
 * DATA_DIR/jobs holds every job's records and logs: owner-only whatever the data dir's mode
 * (docs/security.md). Found in a security review: the first submission made it with the umask's mode
 * (755), as the highest-id mark was written before any job folder, so other users listed the job ids.
 */
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { ManualClock } from './harness.ts';

const dirs: string[] = [];
const closes: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closes.splice(0)) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the data dir's jobs folder", () => {
  it('is made owner-only by the first submission, in a data dir open to others (755)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-jobs-mode-'));
    dirs.push(dir);
    // As the repository's committed data/ is, or a data dir made by hand.
    chmodSync(dir, 0o755);
    const boa = await bootService(resolveConfig({ dataDir: dir }), {
      clock: new ManualClock(),
      computer: new InlinePlanComputer(),
      logger: pino({ level: 'silent' }),
      executor: null,
    });
    closes.push(boa.close);
    const submitted = await boa.app.request('/v1/jobs', {
      method: 'POST',
      headers: { authorization: `Bearer ${boa.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ class: 'cifar10' }),
    });
    expect(submitted.status).toBe(201);
    expect(statSync(join(dir, 'jobs')).mode & 0o777).toBe(0o700);
  });
});
