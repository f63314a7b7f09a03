/**
 * Every fenced shell block marked runnable (```sh runnable) in README.md and docs/ runs verbatim and
 * exits 0, against a service this test starts on a free port with a temp data dir. The commands run in
 * a temp workspace laid out like a checkout (the repo's files linked in, its own data/), so files they
 * write (frontier.svg) and the service's state land there, not in the repo.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../cli/cli-harness.ts';

const REPO = resolve(import.meta.dirname, '../..');

/** The runnable blocks of a Markdown file, with the line each starts on. */
export function runnableBlocks(markdown: string): Array<{ line: number; script: string }> {
  const blocks: Array<{ line: number; script: string }> = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s+runnable\s*$/.test(lines[i] as string)) continue;
    const start = i + 1;
    while (i + 1 < lines.length && !(lines[i + 1] as string).startsWith('```')) i++;
    blocks.push({ line: start + 1, script: lines.slice(start, i + 1).join('\n') });
    i++;
  }
  return blocks;
}

const files = ['README.md', ...readdirSync(join(REPO, 'docs')).map((f) => join('docs', f))].filter((f) =>
  f.endsWith('.md'),
);
const blocks = files.flatMap((file) =>
  runnableBlocks(readFileSync(join(REPO, file), 'utf8')).map((b) => ({ file, ...b })),
);

describe('runnable commands in README and docs', () => {
  const workspace = mkdtempSync(join(tmpdir(), 'boa-runnable-'));
  let service: ChildProcess | undefined;
  let url = '';

  beforeAll(async () => {
    for (const entry of [
      'package.json',
      'node_modules',
      'src',
      'scripts',
      'examples',
      'clients',
      'tsconfig.json',
    ]) {
      symlinkSync(join(REPO, entry), join(workspace, entry));
    }
    mkdirSync(join(workspace, 'data'));
    symlinkSync(join(REPO, 'data/profiles.json'), join(workspace, 'data/profiles.json'));
    symlinkSync(join(REPO, 'data/pollux'), join(workspace, 'data/pollux'));
    const port = await unusedPort();
    url = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, ['--import', 'tsx', 'src/service/main.ts', '--port', String(port)], {
      cwd: workspace,
      env: { ...process.env, BOA_TOKEN: undefined, BOA_DATA_DIR: undefined, BOA_LOG_FORMAT: 'json' },
    });
    const started = service;
    await new Promise<void>((ready, fail) => {
      let log = '';
      started.stdout?.on('data', (c) => {
        log += c;
        if (log.includes('"event":"listening"')) ready();
      });
      started.on('exit', (code) => fail(new Error(`the service exited with ${code}: ${log}`)));
    });
  }, 90_000);

  afterAll(async () => {
    // A graceful stop, so the executor stops any job process the commands started.
    if (service && service.exitCode === null) {
      const exited = new Promise((done) => service?.once('exit', done));
      service.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 15_000))]);
      service.kill('SIGKILL');
    }
    rmSync(workspace, { recursive: true, force: true });
  });

  it('finds the runnable blocks (the README has the budget and frontier commands)', () => {
    expect(blocks.filter((b) => b.file === 'README.md').length).toBeGreaterThan(0);
  });

  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))(
    '%s runs and exits 0',
    async (_where, block) => {
      const run = await new Promise<{ code: number | null; output: string }>((done) => {
        const child = spawn('bash', ['-euo', 'pipefail', '-c', block.script], {
          cwd: workspace,
          env: { ...process.env, BOA_URL: url, BOA_TOKEN: undefined, BOA_DATA_DIR: undefined },
        });
        let output = '';
        child.stdout.on('data', (c) => (output += c));
        child.stderr.on('data', (c) => (output += c));
        child.on('close', (code) => done({ code, output }));
      });
      expect(run.code, run.output).toBe(0);
    },
    180_000,
  );
});
