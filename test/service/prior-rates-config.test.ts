import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from './harness.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-priors-'));
  dirs.push(dir);
  return dir;
}

/** A logger that keeps its JSON lines. */
function recordingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const priorOf = (s: Awaited<ReturnType<typeof startService>>, name: string) =>
  s.service.state.classes.get(name)?.priorRatePerHour;

describe('priorRates in the config of an existing data dir', () => {
  it('a prior added to the config after the first start is applied at the next start, and logged', async () => {
    const dir = dataDir();
    const first = await startService({ dataDir: dir });
    expect(priorOf(first, 'cifar10')).toBe(0);
    await first.close();

    const { logger, lines } = recordingLogger();
    const second = await startService({ dataDir: dir, config: { priorRates: { cifar10: 6 } }, logger });
    expect(priorOf(second, 'cifar10')).toBe(6);
    expect(lines.filter((l) => l.event === 'class_prior_from_config')).toEqual([
      expect.objectContaining({ name: 'cifar10', old: 0, new: 6 }),
    ]);
    await second.close();

    // Stored: a start with the same config changes nothing and says nothing.
    const again = recordingLogger();
    const third = await startService({
      dataDir: dir,
      config: { priorRates: { cifar10: 6 } },
      logger: again.logger,
    });
    expect(priorOf(third, 'cifar10')).toBe(6);
    expect(again.lines.some((l) => l.event === 'class_prior_from_config')).toBe(false);
    await third.close();
  });

  it('replaces a prior set through the API for a class the config names, and keeps the others', async () => {
    const dir = dataDir();
    const first = await startService({ dataDir: dir, config: { priorRates: { cifar10: 6 } } });
    first.service.putClass(first.service.state.classes.get('cifar10')!.profile, 2);
    first.service.putClass(first.service.state.classes.get('bert')!.profile, 3);
    await first.close();

    const second = await startService({ dataDir: dir, config: { priorRates: { cifar10: 6 } } });
    expect({ cifar10: priorOf(second, 'cifar10'), bert: priorOf(second, 'bert') }).toEqual({
      cifar10: 6,
      bert: 3,
    });
    await second.close();
  });

  it('warns about a prior for a class the service does not have, naming it and the classes there are', async () => {
    const { logger, lines } = recordingLogger();
    const s = await startService({
      dataDir: dataDir(),
      config: { priorRates: { cifar: 2, bert: 1 } },
      logger,
    });
    const warnings = lines.filter((l) => l.event === 'class_prior_unmatched');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ names: ['cifar'] });
    expect(warnings[0]!.classes).toContain('cifar10');
    expect(priorOf(s, 'bert')).toBe(1);
    await s.close();
  });
});
