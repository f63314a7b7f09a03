import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import { resolveConfig } from '../../src/service/config.ts';
import { undoFreshDataDir } from '../../src/service/fresh-data-dir.ts';
import { StartupError } from '../../src/service/startup.ts';
import { lockDataDir } from '../../src/store/lock.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-refused-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a start refused once the store is open (a taken port)', () => {
  it('undoes the data dir it made while it still holds the lock, so no other start can own it yet', async () => {
    const dataDir = join(root, 'fresh');
    const undo = undoFreshDataDir(dataDir);
    let lockedDuringUndo: boolean | undefined;
    const config = resolveConfig({ dataDir, port: 1 });
    await expect(
      bootService(config, {
        dataDir,
        computer: new InlinePlanComputer(),
        logger: pino({ level: 'silent' }),
        beforeSideEffects: async () => {
          throw new StartupError('port 1 on 127.0.0.1 is in use');
        },
        onRefused: () => {
          // Another start on the same path would wait for the lock here, not take the dir over.
          try {
            lockDataDir(dataDir, 0).release();
            lockedDuringUndo = false;
          } catch {
            lockedDuringUndo = true;
          }
          undo();
        },
      }),
    ).rejects.toThrow(StartupError);
    expect(lockedDuringUndo).toBe(true);
    expect(existsSync(dataDir)).toBe(false);
  });
});

describe('a start refused for its executor (found in review)', () => {
  it('undoes the data dir it made and closes the store, as for any refused setting', async () => {
    const dataDir = join(root, 'no-cluster');
    const undo = undoFreshDataDir(dataDir);
    const kubeconfig = process.env.KUBECONFIG;
    process.env.KUBECONFIG = join(root, 'no-such-kubeconfig');
    try {
      const config = resolveConfig({ dataDir, executor: 'kubernetes' });
      await expect(
        bootService(config, {
          dataDir,
          computer: new InlinePlanComputer(),
          logger: pino({ level: 'silent' }),
          beforeSideEffects: async () => {},
          onRefused: undo,
        }),
      ).rejects.toThrow(/executor "kubernetes" is not available/);
    } finally {
      if (kubeconfig === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = kubeconfig;
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});
