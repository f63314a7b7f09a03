/**
 * `boa jobs submit --idempotency-key K`: a script that retries a submit (its first try timed out) gets
 * the job the first try made, with the same output and one line more saying so; never a second job.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

describe('boa jobs submit --idempotency-key', () => {
  it('a retried submit prints the same job and says it was already submitted; one job exists', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const args = [
      'jobs',
      'submit',
      'cifar10',
      '--self-launched',
      '--name',
      'r18',
      '--idempotency-key',
      'nightly 42',
    ];
    const submit = () => s.boa(args);

    const first = await submit();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    const id = Number(/^job\s+(\d+) "r18" \(cifar10, waiting\)$/m.exec(first.stdout)?.[1]);
    expect(first.stdout).not.toMatch(/^submitted/m);

    const again = await submit();
    expect(again.stderr).toBe('');
    expect(again.status).toBe(0);
    // The same lines as the first time (the new token aside; keys align to the longer key), plus one.
    const lines = (out: string) =>
      out
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(/^(\S+)\s+/, '$1 ').replace(/^token \S+$/, 'token T'));
    expect(lines(again.stdout).slice(0, -1)).toEqual(lines(first.stdout));
    expect(lines(again.stdout).at(-1)).toMatch(
      new RegExp(
        `^submitted\\s+already, as job ${id}, with this --idempotency-key: no new job; ` +
          'the token above replaces the one printed then, which no longer works$',
      ),
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toHaveLength(1);
    const token = (out: string) => /^token\s+(\S+)$/m.exec(out)?.[1] as string;
    const allocation = (t: string) => s.request('GET', `/v1/jobs/${id}/allocation`, undefined, t);
    expect((await allocation(token(again.stdout))).status).toBe(200);
    expect((await allocation(token(first.stdout))).status).toBe(401);

    const json = await s.boa(['--json', ...args]);
    expect(JSON.parse(json.stdout)).toMatchObject({ id, replayed: true, tokenReplaced: true });
  });

  it('the same key for another job is refused (exit 2) naming the job; a bad key before any request', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--idempotency-key', 'k1']);
    const other = await s.boa(['jobs', 'submit', 'bert', '--self-launched', '--idempotency-key', 'k1']);
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/Idempotency-Key k1 was used for a different request \(job 1\)/);
    const bad = await s.boa([
      'jobs',
      'submit',
      'cifar10',
      '--self-launched',
      '--idempotency-key',
      'clé-日本',
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--idempotency-key must be 1 to 255 printable ASCII characters/);
    // Sent, it would arrive as "k1" (HTTP drops the space) and give back job 1 with a new token.
    const spaced = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--idempotency-key', 'k1 ']);
    expect(spaced.status).toBe(2);
    expect(spaced.stderr).toMatch(/--idempotency-key must be .*no space at either end/);
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toHaveLength(1);
  });
});
