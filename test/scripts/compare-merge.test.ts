import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runScript } from '../helpers/run-script.ts';

const run = (
  policy: string,
  budget: number | null,
  paid: number,
  avg: number,
  rates: string | null = null,
) => ({
  policy,
  budget,
  jobs: 10,
  completed: 10,
  avgJctSeconds: avg,
  p95JctSeconds: avg * 2,
  allocatedGpuHoursPerHour: paid * 0.9,
  paidGpuHoursPerHour: paid,
  rescales: 0,
  simMs: 1,
  // A target run's knob value follows its spend here, so each run is one value of its knob.
  target: budget === null ? paid / 100 : null,
  solver: null,
  rates,
  seed: 1,
  avgQueueSeconds: 5,
  spanHours: 10,
  peakNodes: 3,
  p50JctSeconds: avg / 2,
  p99JctSeconds: avg * 3,
  arrivalSpanHours: 8,
  knob: budget === null ? 'target' : 'budget',
});

describe('compare-merge', () => {
  const root = mkdtempSync(join(tmpdir(), 'compare-merge-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const into = join(root, 'into');
  const from = join(root, 'from');
  mkdirSync(into);
  mkdirSync(from);
  const pollux = [run('pollux-autoscale', null, 40, 2000), run('pollux-autoscale', null, 60, 1000)];
  writeFileSync(
    join(into, 'results.json'),
    JSON.stringify([run('boa', 40, 50, 3000, 'online'), run('boa', 50, 70, 2000, 'online'), ...pollux]),
  );
  writeFileSync(
    join(into, 'at-paid.json'),
    JSON.stringify([{ paidGpuHoursPerHour: 50, minimumMultiple: 1.6, avgJctSeconds: {}, metrics: {} }]),
  );
  writeFileSync(
    join(from, 'results.json'),
    JSON.stringify([run('boa', 40, 40, 1600, 'online'), run('boa', 50, 60, 800, 'online')]),
  );
  const result = runScript('compare-merge.ts', ['--into', into, '--from', from]);

  it("replaces the re-measured series' runs, keeps the others, and reads off at the folder's points", () => {
    expect(result.status).toBe(0);
    const rows = JSON.parse(readFileSync(join(into, 'results.json'), 'utf8')) as Array<{
      policy: string;
      avgJctSeconds: number;
    }>;
    expect(rows.map((r) => [r.policy, r.avgJctSeconds])).toEqual([
      ['boa', 1600],
      ['boa', 800],
      ['pollux-autoscale', 2000],
      ['pollux-autoscale', 1000],
    ]);
    const table = JSON.parse(readFileSync(join(into, 'at-paid.json'), 'utf8'));
    expect(table).toHaveLength(1);
    expect(table[0].minimumMultiple).toBe(1.6);
    expect(table[0].avgJctSeconds.boa).toBeCloseTo(1200, 6);
    expect(table[0].avgJctSeconds['pollux-autoscale']).toBeCloseTo(1500, 6);
    for (const file of ['results.csv', 'avg-jct.svg', 'p95-jct.svg'])
      expect(existsSync(join(into, file))).toBe(true);
  });

  it('keeps a --solver paper series beside the default boa series, not in its place', () => {
    const paperInto = join(root, 'paper-into');
    const paperFrom = join(root, 'paper-from');
    mkdirSync(paperInto);
    mkdirSync(paperFrom);
    writeFileSync(join(paperInto, 'results.json'), JSON.stringify([run('boa', 40, 50, 3000, 'online')]));
    const paper = { ...run('boa', 40, 45, 3500, 'online'), solver: 'paper' };
    writeFileSync(join(paperFrom, 'results.json'), JSON.stringify([paper]));
    const merged = runScript('compare-merge.ts', ['--into', paperInto, '--from', paperFrom]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toContain('replaced boa (paper solver) in');
    const rows = JSON.parse(readFileSync(join(paperInto, 'results.json'), 'utf8'));
    expect(rows.map((r: { solver: string | null }) => r.solver)).toEqual([null, 'paper']);
  });

  it('merges into a folder compare wrote without --at-paid, and writes nothing when one is unreadable', () => {
    const plain = join(root, 'plain');
    mkdirSync(plain);
    writeFileSync(join(plain, 'results.json'), JSON.stringify(pollux));
    const merged = runScript('compare-merge.ts', ['--into', plain, '--from', from]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(merged.stdout).toContain(`(no at-paid.json in ${plain}: no paid points to read the runs off at)`);
    expect(JSON.parse(readFileSync(join(plain, 'results.json'), 'utf8'))).toHaveLength(4);
    expect(existsSync(join(plain, 'at-paid.json'))).toBe(false);

    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'results.json'), JSON.stringify(pollux));
    writeFileSync(join(broken, 'at-paid.json'), '{');
    const refused = runScript('compare-merge.ts', ['--into', broken, '--from', from]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain(join(broken, 'at-paid.json'));
    expect(JSON.parse(readFileSync(join(broken, 'results.json'), 'utf8'))).toHaveLength(2);
    expect(existsSync(join(broken, 'avg-jct.svg'))).toBe(false);
  });

  it('refuses runs of another trace (job count or arrival span), leaving the folder as it was', () => {
    const otherTrace = join(root, 'other-trace');
    mkdirSync(otherTrace);
    writeFileSync(
      join(otherTrace, 'results.json'),
      JSON.stringify([{ ...run('boa', 40, 40, 1600, 'online'), jobs: 85 }]),
    );
    const before = readFileSync(join(into, 'results.json'), 'utf8');
    const refused = runScript('compare-merge.ts', ['--into', into, '--from', otherTrace]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      `error: ${otherTrace} has runs of 85 jobs over 8.00 h of arrivals, ${into} of 10 jobs over 8.00 h ` +
        'of arrivals: merge only runs of the same --trace and --apps\n',
    );
    expect(readFileSync(join(into, 'results.json'), 'utf8')).toBe(before);
  });

  it('refuses runs of a trace of another name, and titles the charts with the one it has', () => {
    const named = join(root, 'named');
    const otherName = join(root, 'other-name');
    mkdirSync(named);
    mkdirSync(otherName);
    writeFileSync(join(named, 'results.json'), JSON.stringify(pollux.map((r) => ({ ...r, trace: 'w-1' }))));
    writeFileSync(
      join(otherName, 'results.json'),
      JSON.stringify([{ ...run('boa', 40, 40, 1600, 'online'), trace: 'w-2' }]),
    );
    const refused = runScript('compare-merge.ts', ['--into', named, '--from', otherName]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      `error: ${otherName} has runs of w-2, ${named} of w-1: merge only runs of the same --trace and --apps\n`,
    );
    // Rows from before compare named the trace merge by their shape, and the charts take the name.
    const merged = runScript('compare-merge.ts', ['--into', named, '--from', from]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(readFileSync(join(named, 'avg-jct.svg'), 'utf8')).toContain('paid GPU-hours per hour: w-1');
  });

  it('refuses runs of another seed or other engine flags, leaving the folder as it was', () => {
    const seeded = join(root, 'seeded');
    mkdirSync(seeded);
    writeFileSync(
      join(seeded, 'results.json'),
      JSON.stringify([{ ...run('boa', 40, 40, 1600, 'online'), seed: 2 }]),
    );
    const before = readFileSync(join(into, 'results.json'), 'utf8');
    const seed = runScript('compare-merge.ts', ['--into', into, '--from', seeded]);
    expect(seed.status).toBe(2);
    expect(seed.stderr).toBe(
      `error: ${seeded} has runs at seed 2, ${into} at seed 1: merge only runs of the same seed\n`,
    );
    // Engine flags are checked where both sides recorded them, whatever order they were given in.
    const flagged = join(root, 'flagged');
    const reflagged = join(root, 'reflagged');
    const slower = join(root, 'slower');
    mkdirSync(flagged);
    mkdirSync(reflagged);
    mkdirSync(slower);
    const engine = { rescaleSeconds: 30, bootSeconds: 90 };
    writeFileSync(join(flagged, 'results.json'), JSON.stringify(pollux.map((r) => ({ ...r, engine }))));
    writeFileSync(
      join(reflagged, 'results.json'),
      JSON.stringify([
        { ...run('boa', 40, 40, 1600, 'online'), engine: { bootSeconds: 90, rescaleSeconds: 30 } },
      ]),
    );
    writeFileSync(
      join(slower, 'results.json'),
      JSON.stringify([{ ...run('boa', 40, 40, 1600, 'online'), engine: { rescaleSeconds: 300 } }]),
    );
    const refused = runScript('compare-merge.ts', ['--into', flagged, '--from', slower]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      `error: ${slower} has runs at engine flags {"rescaleSeconds":300}, ${flagged} at engine flags ` +
        '{"bootSeconds":90,"rescaleSeconds":30}: merge only runs of the same engine flags\n',
    );
    const merged = runScript('compare-merge.ts', ['--into', flagged, '--from', reflagged]);
    expect(merged.status, merged.stderr).toBe(0);
    expect(readFileSync(join(into, 'results.json'), 'utf8')).toBe(before);
  });

  it('refuses the same run twice (rows joined twice by hand), leaving the folder as it was', () => {
    const twice = join(root, 'twice');
    mkdirSync(twice);
    const again = run('boa', 40, 40, 1600, 'online');
    writeFileSync(join(twice, 'results.json'), JSON.stringify([again, again]));
    const before = readFileSync(join(into, 'results.json'), 'utf8');
    const refused = runScript('compare-merge.ts', ['--into', into, '--from', twice]);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toBe(
      `error: ${twice}/results.json has boa at budget 40 twice: keep one run per value of a knob\n`,
    );
    expect(readFileSync(join(into, 'results.json'), 'utf8')).toBe(before);
  });

  it('refuses a folder it cannot read, naming it', () => {
    const bad = runScript('compare-merge.ts', ['--into', into, '--from', join(root, 'missing')]);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toContain(join(root, 'missing', 'results.json'));
  });
});
