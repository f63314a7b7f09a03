/**
 * The deploy image (no Docker engine here): the Dockerfile's shape is checked, and its build step
 * (scripts/build.mjs, tsc to JavaScript) is run for real; the compiled service then starts with plain
 * `node`, no TypeScript loader, and answers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DASHBOARD_SCRIPTS } from '../../src/api/dashboard/scripts.ts';
import { unusedPort } from '../cli/cli-harness.ts';

const REPO = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(REPO, 'Dockerfile'), 'utf8');
const instructions = dockerfile
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));
const temp = mkdtempSync(join(tmpdir(), 'boa-image-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

describe('Dockerfile', () => {
  it('builds in one stage and runs compiled JavaScript on Node 22+ as a non-root user in another', () => {
    const froms = instructions.filter((l) => l.startsWith('FROM '));
    expect(froms.length).toBe(2);
    const runtime = froms[1] as string;
    const major = Number(/^FROM node:(\d+)/.exec(runtime)?.[1]);
    expect(major).toBeGreaterThanOrEqual(22);
    const last = instructions.slice(instructions.indexOf(runtime));
    expect(last.filter((l) => l.startsWith('USER ')).pop()).toBe('USER node');
    expect(last.filter((l) => l.startsWith('CMD ')).pop()).toBe('CMD ["node", "src/service/main.js"]');
    expect(last.some((l) => /^COPY --from=build \/app\/node_modules/.test(l))).toBe(true);
    // Production dependencies only, and no TypeScript loader at run time.
    expect(instructions.some((l) => /npm prune --omit=dev/.test(l))).toBe(true);
    expect(last.join('\n')).not.toMatch(/tsx|npm start/);
    expect(last).toContain('ENV NODE_ENV=production');
  });

  it('the build step compiles the service, which starts with plain node and answers', async () => {
    const out = join(temp, 'app');
    const build = spawnSync(process.execPath, [join(REPO, 'scripts/build.mjs'), out], { encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    const dashboard = ['page.html', ...DASHBOARD_SCRIPTS].map((name) => `src/api/dashboard/${name}`);
    for (const file of ['src/service/main.js', ...dashboard, 'data/profiles.json']) {
      expect(existsSync(join(out, file)), file).toBe(true);
    }
    // As the image lays it out: package.json and node_modules beside the compiled tree.
    cpSync(join(REPO, 'package.json'), join(out, 'package.json'));
    symlinkSync(join(REPO, 'node_modules'), join(out, 'node_modules'));
    const port = await unusedPort();
    const data = join(temp, 'data');
    const child = spawn(
      process.execPath,
      ['src/service/main.js', '--data', data, '--port', String(port), '--log-format', 'json'],
      { cwd: out, env: { ...process.env, BOA_TOKEN: undefined, NODE_OPTIONS: '' } },
    );
    try {
      let log = '';
      child.stdout.on('data', (c) => (log += c));
      child.stderr.on('data', (c) => (log += c));
      await expect.poll(() => log, { timeout: 60_000, interval: 200 }).toMatch(/"event":"listening"/);
      const token = readFileSync(join(data, 'token'), 'utf8').trim();
      const put = await fetch(`http://127.0.0.1:${port}/v1/budget`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ gpuHoursPerHour: 40 }),
      });
      expect(put.status).toBe(200);
      // The plan came from the compiled calculator worker.
      expect(((await put.json()) as { plan: { id: number } | null }).plan?.id).toBeGreaterThan(0);
      expect((await fetch(`http://127.0.0.1:${port}/`)).headers.get('content-type')).toMatch(/text\/html/);
      const script = await fetch(`http://127.0.0.1:${port}/dashboard/${DASHBOARD_SCRIPTS[0]}`);
      expect(script.status).toBe(200);
      expect(log).not.toMatch(/tsx/);
    } finally {
      child.kill('SIGKILL');
    }
  }, 180_000);
});
