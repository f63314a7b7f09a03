import { describe, expect, it } from 'vitest';
import { progressBar } from '../../scripts/lib/progress.ts';
import { simulationProgress } from '../../scripts/lib/sim-progress.ts';
import type { TickSnapshot } from '../../src/sim/engine/engine.ts';

/** A stream that keeps what was written, and a clock the test moves. */
function fakes(isTTY: boolean) {
  const written: string[] = [];
  let at = 0;
  return {
    written,
    advance: (ms: number) => {
      at += ms;
    },
    options: { stream: { isTTY, write: (text: string) => written.push(text) }, now: () => at },
  };
}

describe('progress', () => {
  it('says eta - until a step has finished, then an estimate from the steps done', () => {
    const f = fakes(true);
    const bar = progressBar('compare', 4, true, f.options);
    expect(f.written.at(-1)).toBe(`\rcompare [${'-'.repeat(20)}] 0/4 0% elapsed 0s eta -\x1b[K`);
    f.advance(10_000);
    bar.tick(1);
    // One step in 10 s, three to go.
    expect(f.written.at(-1)).toBe(`\rcompare [#####${'-'.repeat(15)}] 1/4 25% elapsed 10s eta 30s\x1b[K`);
    bar.stop();
  });

  it('off a terminal, prints a line when the count moved (at most every 5 s), else once a minute', () => {
    const f = fakes(false);
    const bar = progressBar('compare', 9, true, f.options);
    expect(f.written).toEqual([]);
    for (let i = 0; i < 11; i++) {
      f.advance(5_000);
      bar.tick(0);
    }
    expect(f.written).toEqual([]);
    f.advance(5_000);
    bar.tick(0);
    expect(f.written).toEqual(['compare [--------------------] 0/9 0% elapsed 1m 0s eta -\n']);
    f.advance(1_000);
    bar.tick(3);
    expect(f.written).toHaveLength(1);
    f.advance(4_000);
    bar.tick(3);
    expect(f.written.at(-1)).toBe('compare [#######-------------] 3/9 33% elapsed 1m 5s eta 2m 10s\n');
    bar.stop();
    expect(f.written).toHaveLength(2);
  });

  it("counts a simulation's finished jobs from its ticks: arrived less still active", () => {
    const f = fakes(true);
    const trace = [0, 60, 120, 180].map((time, i) => ({ time, application: i === 3 ? 'bert' : 'cifar10' }));
    const progress = simulationProgress({ trace: trace as never, apps: ['cifar10'] }, true, f.options);
    const tick = (now: number, active: number) =>
      ({
        cluster: { now },
        activeJobs: Array.from({ length: active }, (_, i) => i),
      }) as unknown as TickSnapshot;
    progress.observe(tick(60, 2));
    expect(f.written.at(-1)).toMatch(/simulate \[-+\] 0\/3 /);
    f.advance(1_000);
    progress.observe(tick(120, 1));
    expect(f.written.at(-1)).toMatch(/ 2\/3 66% /);
    progress.stop(3);
    expect(f.written.join('')).toMatch(/ 3\/3 100% [^\n]*\n$/);
  });
});
