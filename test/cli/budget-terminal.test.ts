/**
 * `boa budget set` on a terminal: asked before a cut to under half, a raise to over twice, or a first
 * budget past the node group's GPUs; --yes and scripts are not asked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { hasScript, onTerminal } from './cli-harness.ts';
import { started, storedBudget } from './budget-fixture.ts';
import { runCleanups } from './cleanups.ts';

afterEach(runCleanups);

describe('boa budget set on a terminal', () => {
  it.skipIf(!hasScript)(
    'asks before cutting the budget to under half or raising it over twice; no answers keep it; --yes and scripts do not ask',
    async () => {
      const s = await started();
      await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
      const no = await onTerminal(s, ['budget', 'set', '8'], 'n\n');
      expect(no.output).toContain('cut the budget from 40 to 8 GPU-hours/hour?');
      expect(no.output).toContain('the budget is unchanged');
      expect(no.status).toBe(1);
      expect(await storedBudget(s)).toBe(40);

      const yes = await onTerminal(s, ['budget', 'set', '8'], 'y\n');
      expect(yes.status).toBe(0);
      expect(await storedBudget(s)).toBe(8);

      // Not a cut to under half, or --yes: no question.
      const up = await onTerminal(s, ['budget', 'set', '5'], '');
      expect(up.output).not.toContain('cut the budget');
      expect(await storedBudget(s)).toBe(5);
      // A raise to over twice is asked about too (found in a trial: 100000 for 40 booted 39 nodes).
      const raise = await onTerminal(s, ['budget', 'set', '20'], 'n\n');
      expect(raise.output).toContain(
        'raise the budget from 5 to 20 GPU-hours/hour? At the next tick jobs may be widened and nodes launched',
      );
      expect(raise.status).toBe(1);
      expect(await storedBudget(s)).toBe(5);
      expect((await onTerminal(s, ['budget', 'set', '20'], 'y\n')).status).toBe(0);
      expect(await storedBudget(s)).toBe(20);
      // 0 is refused by the service, which names the smallest budget it takes: asking "cut the budget
      // from 20 to 0?" first had the newcomer confirm a change never made.
      // Three refusals, which change nothing: at once.
      const [zero, belowSmallest, aboveLargest] = await Promise.all([
        onTerminal(s, ['budget', 'set', '0'], 'y\n'),
        onTerminal(s, ['budget', 'set', '2'], 'y\n'),
        onTerminal(s, ['budget', 'set', '1000000000'], 'y\n'),
      ]);
      expect(zero.output).not.toContain('cut the budget');
      expect(zero.output).toMatch(/gpuHoursPerHour must be a number of GPU-hours per hour of at least/);
      expect(zero.status).not.toBe(0);
      // Nor below the smallest budget it accepts (4: one node's GPUs), nor above the largest (found in
      // review: both were asked about, confirmed, then refused).
      expect(belowSmallest.output).not.toContain('cut the budget');
      expect(belowSmallest.output).toContain('try: boa budget set 4');
      expect(aboveLargest.output).not.toContain('raise the budget');
      expect(aboveLargest.output).toContain('gpuHoursPerHour is at most 100000');
      expect(await storedBudget(s)).toBe(20);
      const forced = await onTerminal(s, ['budget', 'set', '4', '--yes'], '');
      expect(forced.output).not.toContain('cut the budget');
      expect(await storedBudget(s)).toBe(4);
      // A script (no terminal) is never asked.
      const piped = await s.boa(['budget', 'set', '0.2']);
      expect(piped.stdout + piped.stderr).not.toContain('cut the budget');
    },
    60_000,
  );

  it.skipIf(!hasScript)(
    'asks before a first budget above the GPUs the node group can ever run; within them it does not',
    async () => {
      // Found in review: with no budget set nothing was asked, so 100000 typed for 100 went through.
      const s = await started({ config: { maxNodes: 4, gpusPerNode: 4 } });
      expect((await s.request('GET', '/v1/budget')).body.maxGpus).toBe(16);
      const no = await onTerminal(s, ['budget', 'set', '100000'], 'n\n');
      expect(no.output).toContain(
        'set a first budget of 100000 GPU-hours/hour, more than the 16 GPUs the node group can ever run?',
      );
      expect(no.output).toContain('the budget is unchanged');
      expect(no.status).toBe(1);
      expect(await storedBudget(s)).toBeNull();

      const within = await onTerminal(s, ['budget', 'set', '16'], '');
      expect(within.output).not.toContain('set a first budget');
      expect(within.status).toBe(0);
      expect(await storedBudget(s)).toBe(16);
    },
    60_000,
  );
});
