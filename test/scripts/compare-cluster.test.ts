/** compare and simulate on node pools of several GPU types (--cluster). */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLLUX, runScript } from '../helpers/run-script.ts';

const TRACE = resolve(POLLUX, 'workloads/workload-1.csv');

describe('compare --cluster', () => {
  const out = mkdtempSync(join(tmpdir(), 'compare-cluster-'));
  const run = runScript('compare.ts', [
    ...['--trace', TRACE, '--apps', 'cifar10', '--policies', 'lyra,boa,fixed-request'],
    ...['--cluster', 'g4dn:2,p3:1', '--budgets', '30'],
    ...['--out', out, '--workers', '2', '--quiet'],
  ]);

  it('runs a fixed-cluster policy once on the pools, and skips boa with the reason', () => {
    expect(run.status).toBe(0);
    expect(run.stderr).toMatch(
      /skipped boa at budget 30: policy "boa" autoscales one g4dn \(t4\) node group/,
    );
    expect(run.stderr).toMatch(/skipped fixed-request at budget 30: policy "fixed-request" autoscales/);
    const rows = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ policy: 'lyra', cluster: 'g4dn:2,p3:1', budget: 12, completed: 66 });
    expect(Object.keys(rows[0].utilizationByType).sort()).toEqual(['t4', 'v100']);
    expect(rows[0].deadlineSatisfactionRate).toBeGreaterThan(0);
    expect(rows[0].deadlineSatisfactionRate).toBeLessThanOrEqual(1);
    expect(readFileSync(join(out, 'results.csv'), 'utf8')).toMatch(/t4:[0-9.]+;v100:[0-9.]+/);
  });

  it('prints the new metrics per run', () => {
    expect(run.stdout).toMatch(
      /^series\s+knob\s+done\s+avg JCT s\s+p99 JCT s\s+deadlines met\s+interactive queue s/m,
    );
    expect(run.stdout).toMatch(/^lyra\s+budget 12\s+66\/66\s.*%.*t4 [0-9.]+% v100 [0-9.]+%$/m);
  });
});

describe('compare --cluster without --budgets', () => {
  it('runs the fixed-cluster policies and says the others need --budgets', () => {
    const out = mkdtempSync(join(tmpdir(), 'compare-cluster-'));
    const run = runScript('compare.ts', [
      ...['--trace', TRACE, '--apps', 'ncf', '--policies', 'lyra,boa', '--cluster', 'g4dn:2'],
      ...['--out', out, '--workers', '1', '--quiet'],
    ]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('skipped boa: give --budgets to sweep it\n');
    const rows = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    expect(rows.map((r: { policy: string; budget: number }) => `${r.policy}@${r.budget}`)).toEqual([
      'lyra@8',
    ]);
  });
});

describe('simulate --cluster', () => {
  it('takes a JSON file and reports the pools, and refuses a bad spec in one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cluster-spec-'));
    const file = join(dir, 'cluster.json');
    writeFileSync(file, '[{"type":"g4dn","nodes":2},{"type":"g5","nodes":1}]');
    const args = ['--trace', TRACE, '--apps', 'ncf', '--policy', 'lyra', '--format', 'json'];
    const ok = runScript('simulate.ts', [...args, '--cluster', file]);
    expect(ok.status).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ cluster: 'g4dn:2,g5:1', budget: 12 });
    const bad = runScript('simulate.ts', [...args, '--cluster', 'h100:2']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim()).toMatch(/--cluster: unknown GPU type "h100"; allowed: g4dn \(or t4\)/);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});
