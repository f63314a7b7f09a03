/**
 * What `boa jobs submit` puts in a job's workload from the shell: --image (ignored by a local
 * executor, said), --env NAME from the environment, and the working directory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/service/ports.ts';
import { startCliService } from './cli-harness.ts';
import { cleanups, runCleanups } from './cleanups.ts';

afterEach(runCleanups);

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('says at submit that a local executor ignores --image, and shows the image given', async () => {
    const idle = (kind: 'local' | 'kubernetes'): Executor => ({
      kind,
      reconcile: async () => [],
      close: async () => {},
    });
    const local = await startCliService({ executor: idle('local') });
    cleanups.push(local.close);
    const warning =
      'the local executor runs the command on this machine and ignores the image "ghcr.io/me/train:1"' +
      ' (--image, workload.image: used by the Kubernetes executor)';
    const submit = ['jobs', 'submit', 'cifar10', '--image', 'ghcr.io/me/train:1', '--', 'node', 'x.js'];
    const run = await local.boa(submit);
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(`\nwarning  ${warning}\n`);
    const json = await local.boa(['--json', ...submit]);
    expect(JSON.parse(json.stdout).warning).toBe(warning);
    expect((await local.boa(['jobs', 'show', '1'])).stdout).toMatch(/^image\s+ghcr\.io\/me\/train:1$/m);
    // No image, no warning and no image line.
    const plain = await local.boa(['jobs', 'submit', 'cifar10', '--', 'node', 'x.js']);
    expect(plain.stdout).not.toMatch(/^warning/m);
    expect((await local.boa(['jobs', 'show', '3'])).stdout).not.toMatch(/^image/m);
    // Pods use the image: nothing to warn of.
    const pods = await startCliService({ executor: idle('kubernetes') });
    cleanups.push(pods.close);
    const pod = await pods.boa([
      '--json',
      'jobs',
      'submit',
      'cifar10',
      '--image',
      'img:1',
      '--',
      'python',
      'train.py',
    ]);
    expect(JSON.parse(pod.stdout).warning).toBeNull();
  });

  it('--env NAME takes the value from the shell, off the command line; one not set there is refused', async () => {
    const s = await startCliService({
      executor: { kind: 'local', reconcile: async () => [], close: async () => {} },
    });
    cleanups.push(s.close);
    const run = await s.boa(
      ['--json', 'jobs', 'submit', 'cifar10', '--env', 'HF_TOKEN', '--env', 'LR=0.1', '--', 'node', 'x.js'],
      {
        HF_TOKEN: 'from-the-shell',
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).job.workload.env).toEqual({ HF_TOKEN: 'from-the-shell', LR: '0.1' });
    const unset = await s.boa(['jobs', 'submit', 'cifar10', '--env', 'NOT_SET_HERE', '--', 'node', 'x.js'], {
      NOT_SET_HERE: undefined,
    });
    expect(unset.status).toBe(2);
    expect(unset.stderr).toBe(
      'boa: --env NOT_SET_HERE: NOT_SET_HERE is not set here (give NAME=value, or export it)\n',
    );
    // A name JavaScript objects drop as data: refused by name, not submitted without it.
    const proto = await s.boa(['jobs', 'submit', 'cifar10', '--env', '__proto__=x', '--', 'node', 'x.js']);
    expect(proto.status).not.toBe(0);
    expect(proto.stderr).toContain('workload.env.__proto__: __proto__ cannot be given as a field or a name');
    // A variable boa sets per generation: refused, not overridden unseen (a fixed width meant, none had).
    const width = await s.boa(['jobs', 'submit', 'cifar10', '--env', 'WORLD_SIZE=5', '--', 'node', 'x.js']);
    expect(width.status).toBe(2);
    expect(width.stderr).toContain('workload.env.WORLD_SIZE: WORLD_SIZE cannot be given: boa sets BOA_URL,');
    const listed = await s.boa(['--json', 'jobs', 'list']);
    expect(JSON.parse(listed.stdout).jobs).toHaveLength(1);
  });

  it("runs a local executor's command where it was submitted (--workdir relative to it); a remote one's as given", async () => {
    const idle = (kind: 'local' | 'kubernetes'): Executor => ({
      kind,
      reconcile: async () => [],
      close: async () => {},
    });
    const submitted = async (s: Awaited<ReturnType<typeof startCliService>>, args: string[]) => {
      const run = await s.boa(['--json', 'jobs', 'submit', 'cifar10', ...args]);
      expect(run.status, run.stderr).toBe(0);
      return JSON.parse(run.stdout).job.workload.workingDir as string | undefined;
    };
    const local = await startCliService({ executor: idle('local') });
    cleanups.push(local.close);
    mkdirSync(join(local.cwd, 'sub'));
    expect(await submitted(local, ['--', 'node', 'train.js'])).toBe(local.cwd);
    expect(await submitted(local, ['--workdir', 'sub', '--', 'node', 'train.js'])).toBe(
      join(local.cwd, 'sub'),
    );
    expect(await submitted(local, ['--workdir', '/srv', '--', 'node', 'train.js'])).toBe('/srv');
    // Where it runs, in `jobs show` too.
    const shown = await local.boa(['jobs', 'show', '2']);
    expect(shown.stdout).toMatch(new RegExp(`^workdir\\s+${join(local.cwd, 'sub')}$`, 'm'));
    // Pods (even through a port-forward to 127.0.0.1) keep the image's folder, or the path as given.
    const pods = await startCliService({ executor: idle('kubernetes') });
    cleanups.push(pods.close);
    expect(await submitted(pods, ['--', 'python', 'train.py'])).toBeUndefined();
    expect(await submitted(pods, ['--workdir', 'src', '--', 'python', 'train.py'])).toBe('src');

    // A local service that cannot see this shell's folders (a container behind 127.0.0.1) refuses the
    // folder taken from here: the message says where it came from and what to pass.
    const boxed = await startCliService({
      executor: {
        ...idle('local'),
        checkWorkload: (w) =>
          w.workingDir === '/srv'
            ? undefined
            : { field: 'workload.workingDir', message: 'no such directory' },
      },
    });
    cleanups.push(boxed.close);
    const refused = await boxed.boa(['jobs', 'submit', 'cifar10', '--', 'node', 'train.js']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain(`the working directory ${boxed.cwd} is this shell's folder`);
    expect(refused.stderr).toContain('pass --workdir with a folder it sees');
    const given = await boxed.boa([
      'jobs',
      'submit',
      'cifar10',
      '--workdir',
      '/elsewhere',
      '--',
      'node',
      'x',
    ]);
    expect(given.stderr).not.toContain("this shell's folder");
  });
});
