import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hasPython, killLeftovers, watched } from './processes.ts';

// The fake trainers take their class's statistical epochs from boa's allocation, and 8 when boa does not
// say (or cannot be reached when the generation starts). A checkpoint kept its epoch only: one written
// at epoch 5 of 8 was read by the next generation, told 2, as epoch 5 of 2 (the job completed with 3/8
// of its work undone); epoch 1 of 2 read as 1 of 8 did 3/8 of it again (found in review). The
// checkpoint now says its count, and a resume converts through the work done.

const ROOT = resolve(import.meta.dirname, '../..');

const servers: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  killLeftovers();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A stand-in for boa: a running job at width 1, generation 1, its class's epochs `statEpochs` (none: not said). */
async function stubBoa(statEpochs?: number): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    const done = req.url?.endsWith('/complete');
    const body = {
      jobId: 3,
      state: done ? 'done' : 'running',
      width: 1,
      nodes: [{ node: 'n1', gpus: 1 }],
      generation: 1,
      statEpoch: 0,
      ...(statEpochs === undefined ? {} : { statEpochs }),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  servers.push(server);
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const env = (url: string, dir: string) => ({
  BOA_URL: url,
  BOA_JOB_ID: '3',
  BOA_JOB_TOKEN: 'tok',
  BOA_GENERATION: '1',
  WORLD_SIZE: '1',
  NNODES: '1',
  NODE_RANK: '0',
  NPROC_PER_NODE: '1',
  BOA_CHECKPOINT_DIR: dir,
});

// 8 s of work at 2 work-seconds a second on 1 GPU: 4 s in all, 0.5 s an epoch of 8.
const FLAGS = ['--work-seconds', '8', '--speed', '2', '--poll-seconds', '0.05'];

describe.each([
  {
    name: 'examples/fake-train.mjs',
    command: process.execPath,
    script: 'examples/fake-train.mjs',
    skip: false,
  },
  { name: 'examples/fake_train.py', command: 'python3', script: 'examples/fake_train.py', skip: !hasPython },
])('$name', ({ command, script, skip }) => {
  it.skipIf(skip)(
    "resumes a checkpoint written with another count of epochs at the work it had done, not at its epoch's number",
    { timeout: 60_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'boa-fake-epochs-'));
      dirs.push(dir);
      // A generation started while boa did not say its class's epochs: it takes 8, stops at epoch 5.
      const first = watched(command, [script, ...FLAGS], env(await stubBoa(), dir), ROOT);
      await first.waitFor(/epoch 5\/8 done/, 30);
      first.kill('SIGTERM');
      expect(await first.exited).toEqual({ code: 0, signal: null });
      expect(first.output()).toContain('taking 8');
      const saved = JSON.parse(readFileSync(join(dir, 'checkpoint.json'), 'utf8'));
      expect(saved.epoch).toBeGreaterThanOrEqual(5);
      expect(saved.epoch).toBeLessThan(8);

      // The next one is told 2 (bert's): 5/8 of the work and more is epoch 1 of 2, with work left in it.
      const second = watched(command, [script, ...FLAGS], env(await stubBoa(2), dir), ROOT);
      expect(await second.exited).toEqual({ code: 0, signal: null });
      const out = second.output();
      const resumed = /resumed in epoch (\d)\/2 \(([\d.]+) s of its work done\)/.exec(out);
      expect(resumed, out).not.toBeNull();
      expect(resumed?.[1]).toBe('2');
      const done = (saved.epoch * 8) / 8 + saved.workInEpoch;
      // Printed to 0.1 s.
      expect(Math.abs(Number(resumed?.[2]) - (done - 4))).toBeLessThanOrEqual(0.051);
      expect(out).toContain('epoch 2/2 done');
      expect(out).toContain('job 3 complete');
      // What the converting read: the count the checkpoint was written with.
      expect(saved.epochs).toBe(8);
    },
  );
});
