/**
 * The note `boa jobs list` and `show` give a job: why it waits, why it runs narrower than its plan,
 * its restarts, why it ended badly.
 */
import { describe, expect, it } from 'vitest';
import { outcome } from '../../src/cli/commands/jobs.ts';
import { describeJob } from '../../src/cli/commands/jobs-wait.ts';
import type { jobView } from '../../src/service/views.ts';

type JobView = ReturnType<typeof jobView>;

const running = (changes: Partial<JobView>): JobView =>
  ({
    state: 'running',
    waitingFor: null,
    widths: [2, 9, 9, 9],
    statEpoch: 1,
    width: 9,
    restarts: 0,
    exitCode: null,
    failureReason: null,
    ...changes,
  }) as JobView;

describe('a job note', () => {
  it('says a running job has fewer GPUs than its plan gives its epoch, why, and where to see it', () => {
    expect(outcome(running({ width: 2 }))).toBe(
      "on 2 of its plan's 9 GPUs (nodes booting or placement: boa status)",
    );
    expect(outcome(running({ width: 2, narrowedBy: 'budget' }))).toBe(
      "on 2 of its plan's 9 GPUs (the budget's ceiling: boa budget get)",
    );
    expect(outcome(running({}))).toBeNull();
    // Wider than its plan with no lentGpus said (a service from before the field): nothing to say.
    expect(outcome(running({ width: 12 }))).toBeNull();
    // Both at once, each said.
    expect(outcome(running({ width: 2, restarts: 1, exitCode: 3, failureReason: 'rank 0 exited 3' }))).toBe(
      "on 2 of its plan's 9 GPUs (nodes booting or placement: boa status); 1 restart, the last after exit 3: rank 0 exited 3",
    );
  });

  it("says a job that moved into a new epoch since the last tick on the epoch before's width that the next tick takes it on", () => {
    // Epoch 2 (statEpoch 1) plans 9; it still runs epoch 1's 2: not nodes or placement (a newcomer).
    const moved = running({ statEpoch: 1, width: 2, epochAfterLastTick: true });
    expect(outcome(moved)).toBe(
      "on 2 GPUs, epoch 1's plan; its plan gives 9 for epoch 2 from the next tick, as the budget and nodes allow",
    );
    // Narrower in its new epoch's plan: said too (nothing was said of a job wider than its plan).
    expect(outcome(running({ widths: [9, 2], statEpoch: 1, width: 9, epochAfterLastTick: true }))).toBe(
      "on 9 GPUs, epoch 1's plan; its plan gives 2 for epoch 2 from the next tick, as the budget and nodes allow",
    );
    // Lent GPUs on top: one note, the booked ones against epoch 1's plan (found in review: "on 2 GPUs"
    // then "on 4 GPUs: its plan's 2" in the same line).
    expect(outcome({ ...moved, width: 4, lentGpus: 2 })).toBe(
      "on 4 GPUs: epoch 1's plan's 2 and 2 lent by the idle fill (idle on its nodes, not booked); its plan gives 9 for epoch 2 from the next tick, as the budget and nodes allow",
    );
    // Held narrow by the budget's ceiling: that reason stands at the next tick too (found in review: a
    // job at 4 of 16 was promised 16 at every epoch change).
    expect(outcome({ ...moved, narrowedBy: 'budget' })).toBe(
      "on 2 of its plan's 9 GPUs (the budget's ceiling: boa budget get)",
    );
    // Not on the epoch before's width either (nodes booting): the usual note, against the new epoch.
    expect(outcome(running({ widths: [16, 16], statEpoch: 1, width: 4, epochAfterLastTick: true }))).toBe(
      "on 4 of its plan's 16 GPUs (nodes booting or placement: boa status)",
    );
    // At its plan's width: nothing to say.
    expect(outcome(running({ epochAfterLastTick: true }))).toBeNull();
    expect(outcome(running({ width: 2, epochAfterLastTick: false }))).toBe(
      "on 2 of its plan's 9 GPUs (nodes booting or placement: boa status)",
    );
  });

  it('says a running job on GPUs the idle fill lent runs wider than its plan, and by how many', () => {
    expect(outcome(running({ width: 12, lentGpus: 3 }))).toBe(
      "on 12 GPUs: its plan's 9 and 3 lent by the idle fill (idle on its nodes, not booked)",
    );
    // Narrowed by the budget and lent on what is left: the booked GPUs against the plan, then the lent.
    expect(outcome(running({ width: 4, lentGpus: 2, narrowedBy: 'budget' }))).toBe(
      "on 2 of its plan's 9 GPUs (the budget's ceiling: boa budget get); on 4 GPUs: its plan's 2 and 2 lent by the idle fill (idle on its nodes, not booked)",
    );
    expect(outcome(running({ lentGpus: 0 }))).toBeNull();
  });

  it('says nothing of a plan for a job that is not running', () => {
    expect(outcome(running({ state: 'waiting', waitingFor: 'nodes', width: 0 }))).toBe(
      'waits for nodes to boot',
    );
    expect(outcome(running({ state: 'done', width: 0 }))).toBeNull();
  });

  it('says a job done without ever reporting progress ended so, and only a done one', () => {
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 0, reportedProgress: false }))).toBe(
      'ended without reporting progress',
    );
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 3, reportedProgress: true }))).toBeNull();
  });

  it("says a job done before its plan's last epoch was last reported there, the epoch it shows", () => {
    // Its last reports lost while the service was down, or an early stop: the epoch column is the report's.
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 0, reportedProgress: true }))).toBe(
      'last reported epoch 1 of 4',
    );
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 2, reportedProgress: true }))).toBe(
      'last reported epoch 3 of 4',
    );
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 3, reportedProgress: true }))).toBeNull();
    // A running job in an early epoch is no news, nor a job that never reported (its own note).
    expect(outcome(running({ statEpoch: 0, reportedProgress: true }))).toBeNull();
    expect(outcome(running({ state: 'done', width: 0, statEpoch: 0, reportedProgress: false }))).toBe(
      'ended without reporting progress',
    );
    // Running and not reporting yet is not news: it may be starting.
    expect(outcome(running({ statEpoch: 0, width: 2, reportedProgress: false }))).toBeNull();
  });

  it('says what `jobs wait` and `logs -f` report of a running job with its lent GPUs apart, as the dashboard does', () => {
    const job = running({ id: 3, name: 'first', width: 12, lentGpus: 3 });
    expect(describeJob(job)).toBe('job 3 (first): running on 12 GPUs (3 lent by the idle fill, not booked)');
    expect(describeJob({ ...job, lentGpus: 0 })).toBe('job 3 (first): running on 12 GPUs');
  });
});
