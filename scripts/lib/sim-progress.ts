/** One simulation's progress: jobs finished of the trace's jobs, counted from the engine's ticks. */
import type { TickSnapshot } from '../../src/sim/engine/engine.ts';
import { progressBar, type ProgressOptions } from './progress.ts';
import type { SimInputs } from './sim-setup.ts';

export function simulationProgress(
  inputs: Pick<SimInputs, 'trace' | 'apps'>,
  enabled: boolean,
  options: ProgressOptions = {},
): { observe(tick: TickSnapshot): void; stop(completed: number): void } {
  const arrivals = inputs.trace
    .filter((job) => inputs.apps === undefined || inputs.apps.includes(job.application))
    .map((job) => job.time)
    .sort((a, b) => a - b);
  const bar = progressBar('simulate', arrivals.length, enabled, options);
  let arrived = 0;
  return {
    observe: (tick) => {
      // Jobs arrived by now less those still active (waiting or running) are done.
      while (arrived < arrivals.length && (arrivals[arrived] as number) <= tick.cluster.now) arrived++;
      bar.tick(Math.max(0, arrived - tick.activeJobs.length));
    },
    // The last jobs finish after the last tick the observer sees: the result's count ends the bar.
    stop: (completed) => {
      bar.tick(completed);
      bar.stop();
    },
  };
}
