/**
 * The starting budget (config `budget`, BOA_BUDGET, --budget) passes PUT /v1/budget's checks: `--budget
 * 0.5` on a fresh data dir started, and its job waited for the budget for ever (found in a newcomer trial).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, resolveConfig } from '../../src/service/config.ts';
import { fromSource } from '../../src/service/config-sources.ts';
import { startService } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-config-budget-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the starting budget', () => {
  it("is refused above PUT /v1/budget's maximum, naming the setting as given and the value", () => {
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { budget: 1e9 });
    expect(() => resolveConfig(file)).toThrow(
      'budget in boa.json must be above 0 and at most 100000 GPU-hours per hour, as PUT /v1/budget allows (got 1000000000)',
    );
  });

  it('0 is refused naming the smallest accepted budget, as PUT /v1/budget refuses it', () => {
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { budget: 0 });
    expect(() => resolveConfig(file)).toThrow(
      "budget in boa.json must be a number of GPU-hours per hour of at least the smallest accepted budget (what one job of the cheapest class needs on whole nodes: a node's GPUs with the default classes) (got 0)",
    );
  });

  it.each([0.5, 2])(
    '%s, below one job of the cheapest class on one node, refuses the start',
    async (budget) => {
      const start = startService({ config: { budget } });
      await expect(start).rejects.toThrow(ConfigError);
      await expect(start).rejects.toThrow(
        `starting budget (budget in the config file, BOA_BUDGET or --budget): budget ${budget} GPU-hours/hour ` +
          'cannot keep even one job running: the cheapest class needs at least 1 GPU, and boa pays whole nodes ' +
          'of 4 GPUs. The smallest accepted budget is 4. Set it to at least 4, or leave it unset and set one ' +
          'later with `boa budget set`',
      );
    },
  );

  it('at the floor starts with it', async () => {
    const boa = await startService({ config: { budget: 4 } });
    expect(boa.service.state.budget?.gpuHoursPerHour).toBe(4);
    await boa.close();
  });

  it('a stored one wins over a different configured one, and the start says so once', async () => {
    const dataDir = join(root, 'stored');
    const first = await startService({ dataDir, config: { budget: 40 } });
    await first.close();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    // Below the floor too: the configured budget is not used, so it is not what refuses a start.
    const again = await startService({ dataDir, logger, config: { budget: 2 } });
    expect(again.service.state.budget?.gpuHoursPerHour).toBe(40);
    const ignored = lines.filter((l) => l.event === 'config_budget_ignored');
    expect(ignored).toHaveLength(1);
    expect(ignored[0]!.msg).toBe(
      'the configured budget 2 (budget in the config file, BOA_BUDGET or --budget) is ignored: the data dir ' +
        'holds budget 40, set earlier, and the starting budget applies at the first start only. Change it ' +
        'with `boa budget set` (PUT /v1/budget)',
    );
    await again.close();
  });
});
