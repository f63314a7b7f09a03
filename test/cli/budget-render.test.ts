/**
 * How `boa budget get` and `boa status` render the budget's figures: singular counts, the ceiling and
 * budget past the node group, the window's GPU-hours by class, and when the window is back within.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { renderBudget } from '../../src/cli/commands/budget.ts';
import { renderStatus } from '../../src/cli/commands/status.ts';
import { started } from './budget-fixture.ts';
import { runCleanups } from './cleanups.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa budget', { timeout: 180_000 }, () => {
  it('counts one node and one job in the singular, in budget get and status', async () => {
    const s = await started();
    await s.boa(['budget', 'set', '4']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    const one = { ...budget.control, ceilingNodes: 1, heartbeatHoldNodes: 1, queuedForBudget: 1 };
    const text = renderBudget({ ...budget, control: one });
    expect(text).toMatch(/^ceiling\s+1 node \(/m);
    expect(text).toMatch(/^held\s+at most 1 node: /m);
    expect(text).toMatch(/^queued\s+1 job waits for the budget \(least work left first\)$/m);
    const fifo = renderBudget({ ...budget, control: { ...one, queueOrder: 'submitted' } });
    expect(fifo).toMatch(/^queued\s+1 job waits for the budget \(oldest first\)$/m);
    // A credit that rounds to 0.0 is no credit line (found in a trial: "plans get 0.0 GPU-hours/hour
    // more"), one that does not is.
    expect(renderBudget({ ...budget, control: { ...one, creditGpuHoursPerHour: 0.026 } })).not.toMatch(
      /^credit/m,
    );
    expect(renderBudget({ ...budget, control: { ...one, creditGpuHoursPerHour: 0.05 } })).toMatch(
      /^credit\s+plans get 0\.1 GPU-hours\/hour more/m,
    );
    // A ceiling above what the node group can hold says so (found in a newcomer trial: 82 nodes of 64).
    const past = { ...one, ceilingNodes: 82, ceilingGpus: 330.1 };
    expect(renderBudget({ ...budget, maxGpus: 256, control: past })).toMatch(
      /^ceiling\s+82 nodes \(330\.1 GPUs\) for the next 1 h .*; the node group holds at most 256 GPUs$/m,
    );
    expect(renderBudget({ ...budget, maxGpus: 400, control: past })).not.toMatch(/holds at most/);
    // A budget above them: the dollars are the group's GPUs' (the service's), and said to be.
    const above = { ...budget, gpuHoursPerHour: 257, maxGpus: 256, dollarsPerMonth: 182768.64 };
    expect(renderBudget(above)).toMatch(
      /^budget\s+257 GPU-hours\/hour \(at most the node group's 256 GPUs can be paid: \$182,768\.64\/month\)$/m,
    );
    expect(renderBudget({ ...above, dollarsPerMonth: null })).toMatch(
      /^budget\s+257 GPU-hours\/hour \(at most the node group's 256 GPUs can be paid\)$/m,
    );
    expect(renderBudget({ ...above, maxGpus: 400 })).toMatch(
      /^budget\s+257 GPU-hours\/hour \(\$182,768\.64\/month\)$/m,
    );
    const two = renderBudget({ ...budget, control: { ...one, ceilingNodes: 2, queuedForBudget: 2 } });
    expect(two).toMatch(/^ceiling\s+2 nodes \(/m);
    expect(two).toMatch(/^queued\s+2 jobs wait for the budget/m);
    const status = (await s.request('GET', '/v1/status')).body;
    const at = '2026-11-30T12:00:00.000Z';
    const shown = renderStatus({
      ...status,
      nodeGroup: { ...status.nodeGroup, lastResize: { target: 1, status: 'requested', at } },
      budget: { ...status.budget, queuedForBudget: 1 },
    });
    expect(shown).toMatch(/^last resize\s+to 1 node, requested/m);
    expect(shown).toMatch(/; 1 job queued for the budget/m);
  });

  it("shows where the window's allocated GPU-hours went, by class, and nothing while none were", async () => {
    const s = await started();
    await s.boa(['budget', 'set', '40']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    expect(budget.window.allocatedByClass).toEqual([]);
    expect(renderBudget(budget)).not.toMatch(/^allocated in the last/m);
    const allocatedByClass = [
      { className: 'bert', gpuHours: 412.34, gpuHoursPerHour: 17.18, share: 0.6 },
      { className: null, gpuHours: 274.9, gpuHoursPerHour: 11.45, share: 0.4 },
      { className: 'cifar10', gpuHours: 0.04, gpuHoursPerHour: 0.59, share: 0.0001 },
    ];
    const text = renderBudget({ ...budget, window: { ...budget.window, hours: 24, allocatedByClass } });
    expect(text).toMatch(/^allocated in the last 24 h\s+GPU-hours\s+GPU-h\/h\s+share$/m);
    // A ledger younger than the window: the span the rows cover, not the window's (found in review).
    const young = renderBudget({ ...budget, window: { ...budget.window, hours: 3, allocatedByClass } });
    expect(young).toMatch(/^allocated in the 3\.0 h on record\s+GPU-hours/m);
    expect(text).toMatch(/^bert\s+412\.34\s+17\.18\s+60%$/m);
    expect(text).toMatch(/^\(before classes were kept\)\s+274\.90\s+11\.45\s+40%$/m);
    // One blank line between the tables, not two.
    expect(text).toMatch(/^since set .*\n\nallocated in the last 24 h/m);
    // A few minutes' GPU-hours are not shown as none.
    expect(text).toMatch(/^cifar10\s+0\.04\s+0\.59\s+0%$/m);
  });

  it("says when the window's paid average is back within its budget, or not at the current rate", async () => {
    const s = await started();
    await s.boa(['budget', 'set', '4']);
    const budget = (await s.request('GET', '/v1/budget')).body;
    expect(budget.window.backWithinBudget).toBeNull();
    expect(renderBudget(budget)).not.toMatch(/^back within/m);
    const at = '2026-12-01T19:30:00.000Z';
    const back = { ...budget.window, backWithinBudget: { at, paidGpusNow: 0 } };
    expect(renderBudget({ ...budget, window: back })).toMatch(
      /^back within\s+the window's paid average is within its budget from 2026-12-01T19:30:00Z on, if paid stays at 0 GPUs, as now$/m,
    );
    const never = { ...budget.window, backWithinBudget: { at: null, paidGpusNow: 8 } };
    expect(renderBudget({ ...budget, window: never })).toMatch(
      /^back within\s+not at the current rate: 8 GPUs paid now, above the budget 4$/m,
    );
  });
});
