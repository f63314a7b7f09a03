/**
 * A data dir from before the speedup-table bound (core/profile-entries.ts) may hold classes past it:
 * every plan then took minutes. The service starts, plans without the largest classes until the rest
 * fit, says which in status and the log with the way out, and changes nothing stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/commands/status.ts';
import { ManualClock, startService } from './harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await boa?.close();
  boa = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** `epochs` statistical epochs of 1,000 widths each: 1,000 speedup entries an epoch. */
const wide = (name: string, epochs: number) => ({
  name,
  rescaleSeconds: 30,
  epochs: Array.from({ length: epochs }, () => ({
    workSeconds: 100,
    speedup: Object.fromEntries(
      Array.from({ length: 1000 }, (_, i) => [String(i + 1), Math.round((i + 1) ** 0.5 * 100) / 100]),
    ),
  })),
});

describe('stored classes past the speedup-table bound', () => {
  it('are left out of plans, named in status with the way out, and kept until put smaller or deleted', async () => {
    // Expected: w1-w3 (60,000 entries each) put through the API; w4 (80,000) stored as a service from
    // before the bound did, 260,000 in all. After a restart: w4 alone is left out (the rest fit), status
    // says so naming boa classes put and delete, a budget's plan is made without it, w4 is still listed
    // whole, and deleting it ends the error. Before: no word, and every plan took all 260,000 entries.
    const dataDir = mkdtempSync(join(tmpdir(), 'boa-over-bound-'));
    dirs.push(dataDir);
    const clock = new ManualClock();
    boa = await startService({ dataDir, clock });
    for (const name of ['w1', 'w2', 'w3'])
      expect((await boa.request('PUT', `/v1/classes/${name}`, { profile: wide(name, 60) })).status).toBe(200);
    boa.repo.putClass({ ...wide('w4', 80), weight: 1 }, 0, clock.now());
    await boa.close();
    boa = await startService({ dataDir, clock });

    const status = (await boa.request('GET', '/v1/status')).body;
    expect(status.classesLeftOut?.classes).toEqual(['w4']);
    expect(status.classesLeftOut.message).toMatch(
      /^classes w4 \(80000 entries over 80 epochs\) are left out of plans \(their jobs wait, new ones are refused\): .* hold 2\d{5} entries .* more than the 200000 kept .* \(boa classes put FILE\), or delete it \(boa classes delete w4\)$/,
    );
    expect(renderStatus(status)).toMatch(
      /^classes error\s+classes w4 \(80000 entries over 80 epochs\) are left/m,
    );
    expect((await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).status).toBe(200);
    const plan = (await boa.request('GET', '/v1/plan')).body;
    expect(Object.keys(plan.widths)).toEqual(expect.arrayContaining(['w1', 'w2', 'w3']));
    expect(Object.keys(plan.widths)).not.toContain('w4');
    // A new job of it is refused, saying why: no plan would give it widths.
    const refused = await boa.request('POST', '/v1/jobs', { class: 'w4' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'class_left_out', field: 'class' });
    expect(refused.body.error.message).toMatch(
      /^class w4 is not planned: classes w4 .*\(boa classes delete w4\)$/,
    );
    expect((await boa.request('POST', '/v1/jobs', { class: 'w1' })).status).toBe(201);
    const listed = (await boa.request('GET', '/v1/classes')).body.classes;
    expect(listed.find((c: { name: string }) => c.name === 'w4')?.profile.epochs).toHaveLength(80);

    expect((await boa.request('DELETE', '/v1/classes/w4')).status).toBe(200);
    expect((await boa.request('GET', '/v1/status')).body.classesLeftOut).toBeNull();
    // Put again within the bound, it is planned and takes jobs.
    const smaller = { ...wide('w4', 10), weight: 1 };
    expect((await boa.request('PUT', '/v1/classes/w4', { profile: smaller })).status).toBe(200);
    expect((await boa.request('POST', '/v1/jobs', { class: 'w4' })).status).toBe(201);
  });
});
