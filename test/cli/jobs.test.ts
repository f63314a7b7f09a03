import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/service/ports.ts';
import { startCliService } from './cli-harness.ts';
import { startProcessService, untilLog } from './process-service.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

/** Table rows as whitespace-split cells, keyed by the first cell; the header row is dropped. */
function rows(stdout: string): string[][] {
  return stdout
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/));
}

// Each case runs the CLI (a node process) many times in turn: seconds each on a loaded machine, where
// the default 60 s ran out (a run alongside others on 2 cores). Passing cases take no longer.
describe('boa jobs', { timeout: 180_000 }, () => {
  it('says at submit when another waiting or running job has the name, and submits all the same', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    expect((await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'first'])).stderr).toBe(
      '',
    );
    const again = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'first']);
    expect(again.status).toBe(0);
    expect(again.stderr).toBe(
      'boa: job 1 (waiting) is also named "first": while both are active, commands take their ids, not the name\n',
    );
    // Once the first is cancelled, the name is the second's alone: nothing to say.
    expect((await s.boa(['jobs', 'cancel', '1'])).status).toBe(0);
    expect((await s.boa(['jobs', 'submit', 'bert', '--self-launched', '--name', 'other'])).stderr).toBe('');
    expect((await s.boa(['jobs', 'show', 'first'])).status).toBe(0);
  });

  it('submits, lists and cancels a job; the printed token is the job token', async () => {
    const s = await startCliService();
    cleanups.push(s.close);

    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--name', 'resnet18']);
    expect(submit.stderr).toBe('');
    expect(submit.status).toBe(0);
    // The name given shown with the id, to recognise the job by.
    expect(submit.stdout).toMatch(/^job\s+\d+ "resnet18" \(cifar10, waiting\)$/m);
    const id = Number(/^job\s+(\d+) "resnet18" \(cifar10, waiting\)$/m.exec(submit.stdout)?.[1]);
    const token = /^token\s+(\S+)$/m.exec(submit.stdout)?.[1] as string;
    expect(submit.stdout).toMatch(/launcher needs this token/);
    expect(submit.stdout).toMatch(/self-launched: boa starts nothing for it, but gives it GPUs \(paid\)/);
    // Asked for by name: the API's warning that a job without a workload is self-launched is not repeated.
    expect(submit.stdout).not.toMatch(/^warning/m);
    // Submitted before any budget: it would wait for a plan forever; the CLI says what to do.
    expect(submit.stdout).toMatch(
      /^budget\s+none is set: the job waits until boa budget set <gpuHoursPerHour>$/m,
    );
    // The job's own token reads the job's allocation, and is not the operator token.
    expect(token).not.toBe(s.token);
    expect((await s.request('GET', `/v1/jobs/${id}/allocation`, undefined, token)).status).toBe(200);

    const list = await s.boa(['jobs', 'list']);
    expect(list.status).toBe(0);
    expect(list.stdout.split('\n')[0]).toMatch(/^id\s+name\s+class\s+state\s+epoch\s+GPUs\s+GPU-h/);
    const [row] = rows(list.stdout);
    expect(row?.slice(0, 10)).toEqual([
      String(id),
      'resnet18',
      'cifar10',
      'waiting',
      '1', // its first statistical epoch
      '0',
      '0.00', // never placed: no GPU-hours booked
      expect.any(String),
      '-',
      '-',
    ]);
    // Why it waits (a plan, nodes to boot, or the budget), in the last column.
    expect(row?.slice(10).join(' ')).toMatch(
      /^(waits for a plan \(is a budget set\? boa budget set N\)|waits for nodes to boot|queued for the budget)$/,
    );

    const cancel = await s.boa(['jobs', 'cancel', String(id)]);
    expect(cancel.status).toBe(0);
    expect(cancel.stdout).toBe(`job ${id} is cancelled\n`);
    expect((await s.request('GET', `/v1/jobs/${id}`)).body.state).toBe('cancelled');

    const waiting = await s.boa(['jobs', 'list', '--state', 'waiting']);
    expect(waiting.stdout).toBe('no jobs\n');
    const cancelled = await s.boa(['--json', 'jobs', 'list', '--state', 'cancelled']);
    expect(JSON.parse(cancelled.stdout).jobs.map((j: { id: number }) => j.id)).toEqual([id]);
  });

  it('points stop, kill, rm and delete at cancel, cancelling nothing', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched']);
    const id = /^job\s+(\d+)/m.exec(submit.stdout)?.[1] as string;
    const verbs = ['stop', 'kill', 'rm', 'delete'];
    // Each run cancels nothing, so none depends on another: all at once, with the help.
    const [help, ...runs] = await Promise.all([
      s.boa(['jobs', '--help']),
      ...verbs.map((verb) => s.boa(['jobs', verb, id, '--force'])),
    ]);
    for (const [i, verb] of verbs.entries()) {
      expect(runs[i]?.status).toBe(2);
      expect(runs[i]?.stderr).toBe(
        `boa: boa jobs has no ${verb}: to stop a job, cancel it: boa jobs cancel <job...>\n`,
      );
    }
    const job = await s.request('GET', `/v1/jobs/${id}`);
    expect(job.body.state).toBe('waiting');
    // Not offered in the help.
    expect(help?.stdout).not.toMatch(/^\s+(stop|kill|rm|delete)\b/m);
  });

  it('refuses an unknown class (exit 2, naming the known ones), a bad id, a missing job', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    // Every run below is refused and stores nothing, so none depends on another: all at once.
    const [
      unknown,
      typo,
      noClass,
      noDashes,
      taken,
      late,
      plain,
      noName,
      forgot,
      both,
      nothing,
      badId,
      unknownName,
      missing,
      badLimit,
      zeroLimit,
      badState,
    ] = await Promise.all([
      s.boa(['jobs', 'submit', 'gpt5', '--self-launched']),
      s.boa(['jobs', 'submit', 'cifar01', '--', 'node', '-e', '0']),
      s.boa(['jobs', 'submit', '--name', 'x', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'train.js', '--epochs', '3']),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'x.js', '--name', 'x']),
      s.boa([
        'jobs',
        'submit',
        'cifar10',
        '--name',
        't',
        '--wait',
        'python3',
        'train.py',
        '--env',
        'A=1',
        '--',
        '--lr',
        "it's",
      ]),
      s.boa(['jobs', 'submit', 'cifar10', 'node', 'x.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--name', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--name', 'x']),
      s.boa(['jobs', 'submit', 'cifar10', '--self-launched', '--', 'node', 'train.js']),
      s.boa(['jobs', 'submit', 'cifar10', '--']),
      s.boa(['jobs', 'cancel', '-1']),
      s.boa(['jobs', 'cancel', 'abc']),
      s.boa(['jobs', 'cancel', '99']),
      s.boa(['jobs', 'list', '--limit', 'abc']),
      s.boa(['jobs', 'list', '--limit', '0']),
      s.boa(['jobs', 'list', '--state', 'sleeping']),
    ]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^boa: unknown class "gpt5"; known classes: .*cifar10/);
    // A newcomer's own model: the refusal says how a class of its own is added.
    expect(unknown.stderr).toContain(
      'A model of your own runs as the known class closest to it in scaling, or as a class of its own ' +
        'added first with its speedup table: boa classes put class.json',
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);
    // A typo names the class it most likely meant.
    expect(typo.status).toBe(2);
    expect(typo.stderr).toMatch(
      /^boa: unknown class "cifar01" \(the closest known name: cifar10\); known classes: /,
    );
    // The class forgotten: commander would take the command's first word for it.
    expect(noClass.status).toBe(2);
    expect(noClass.stderr).toMatch(
      /^boa: no class before --: "node" is the start of the command; give the class first/,
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // The -- forgotten: the job's own option reads as boa's, and the error says where it goes.
    expect(noDashes.status).toBe(2);
    expect(noDashes.stderr).toBe(
      "error: unknown option '--epochs'\n(the job's command and its options go after --: boa jobs submit cifar10 -- node train.js --epochs 3)\n(add --help for usage)\n",
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // The -- forgotten before options boa has too: they were boa's, and the job never saw them.
    expect(taken.status).toBe(2);
    expect(taken.stderr).toBe(
      `boa: the job's command goes after --: boa jobs submit cifar10 -- node x.js --name x (without the --, boa would have run "node x.js" and read options among its words as its own)\n`,
    );
    // boa's own options before the command stay before the --; a word after a late -- is the job's too.
    expect(late.status).toBe(2);
    expect(late.stderr).toMatch(
      /^boa: the job's command goes after --: boa jobs submit cifar10 --name t --wait -- python3 train\.py --env A=1 --lr 'it'\\''s' \(without the --, boa would have run "python3 train\.py --lr 'it'\\''s'"/,
    );
    // Not even a plain command is taken without it.
    expect(plain.status).toBe(2);
    expect(plain.stderr).toMatch(
      /^boa: the job's command goes after --: boa jobs submit cifar10 -- node x\.js /,
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // A value forgotten: commander would take the "--" for it, and the job would be named "--".
    expect(noName.status).toBe(2);
    expect(noName.stderr).toBe('boa: --name needs a value before --, e.g. --name VALUE -- node train.js\n');
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    // Nothing after -- (a script's empty $CMD): not a self-launched job nobody would launch.
    // No command and no --self-launched: a forgotten --, which would hold paid GPUs for nobody.
    expect(forgot.status).toBe(2);
    expect(forgot.stderr).toMatch(
      /give the command boa should run after --, e\.g\. boa jobs submit cifar10 -- python3 train\.py \(for a job you launch yourself: --self-launched\)/,
    );
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--self-launched takes no command/);
    expect(nothing.status).toBe(2);
    expect(nothing.stderr).toBe(
      'boa: nothing after --: give the command boa should run, e.g. -- python3 train.py\n',
    );
    expect((await s.request('GET', '/v1/jobs')).body.jobs).toEqual([]);

    expect(badId.status).toBe(2);
    expect(badId.stderr).toMatch(/job id is a positive integer/);
    expect(unknownName.status).toBe(1);
    expect(unknownName.stderr).toBe('boa: no waiting or running job is named "abc" (see boa jobs list)\n');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('boa: job 99 not found (see boa jobs list)\n');
    expect(badLimit.status).toBe(2);
    expect(badLimit.stderr).toBe('boa: --limit must be a number, got "abc"\n');
    // Out of the API's range: its message, and the flag that set it.
    expect(zeroLimit.status).toBe(2);
    expect(zeroLimit.stderr).toMatch(/^boa: .*limit must be a whole number from 1 to 10000.* \(--limit\)\n$/);
    expect(badState.status).toBe(2);
    expect(badState.stderr).toBe(
      'boa: --state takes waiting, running, done, cancelled, failed, lost, or several separated by commas (waiting,running); got "sleeping"\n',
    );
  });

  it('shows one job: state, width and generation, epoch, its command and the local logs folder', async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'r18' });
    await s.ticks(3);
    const job = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(job.generation).toBeGreaterThan(0);
    // The executor's log folders, as a local service writes them under its data dir.
    const dataDir = join(s.cwd, 'data');
    for (const generation of ['1', String(job.generation)]) {
      mkdirSync(join(dataDir, 'jobs', String(body.id), generation), { recursive: true });
    }
    // The data dir named, as a local service's user does (BOA_DATA_DIR) or its token file proves it.
    const show = await s.boa(['jobs', 'show', String(body.id)], { BOA_DATA_DIR: dataDir });
    expect(show.stderr).toBe('');
    expect(show.status).toBe(0);
    const lines = Object.fromEntries(
      show.stdout
        .trimEnd()
        .split('\n')
        .map((line) => [
          line.split(/\s{2,}/)[0],
          line
            .split(/\s{2,}/)
            .slice(1)
            .join('  '),
        ]),
    );
    expect(lines).toMatchObject({
      job: `${body.id} r18 (cifar10)`,
      state: 'running',
      GPUs: `${job.width}, generation ${job.generation}`,
      'statistical epoch': '1 of 8',
      restarts: '0',
      command: 'none: self-launched (it polls its allocation)',
      logs: `${join(dataDir, 'jobs', String(body.id), String(job.generation))}/<rank>.log`,
    });
    expect(job.width).toBeGreaterThan(0);
    // What it cost the budget so far, in GPU-hours and at the node's price, as the API books it.
    expect(lines['GPU-hours']).toBe(
      `${job.gpuHours.toFixed(2)} booked to the budget (lent GPUs not counted, about $${job.dollars.toFixed(2)})`,
    );
    // No logs line for a service that is not local to this machine's data dir.
    const elsewhere = await s.boa(['jobs', 'show', String(body.id)], { BOA_DATA_DIR: join(s.cwd, 'none') });
    expect(elsewhere.stdout).not.toMatch(/^logs/m);
    // Ended, its generation went up as it stopped: none ran that one, so show gives none.
    expect((await s.request('POST', `/v1/jobs/${body.id}/cancel`)).status).toBe(200);
    const ended = await s.boa(['jobs', 'show', String(body.id)]);
    expect(ended.stdout).toMatch(/^GPUs\s+0$/m);
    const missing = await s.boa(['jobs', 'show', '99']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('boa: job 99 not found (see boa jobs list)\n');
  });

  it("names no logs folder from the CLI's own ./data when the token did not come from that data dir", async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(3);
    const { generation } = (await s.request('GET', `/v1/jobs/${body.id}`)).body;
    expect(generation).toBeGreaterThan(0);
    // Another local service's data dir where the CLI runs (job ids start at 1 on every service): its
    // job of this id has logs. The token came from BOA_TOKEN, so nothing ties ./data to this service.
    mkdirSync(join(s.cwd, 'data', 'jobs', String(body.id), String(generation)), { recursive: true });
    const show = await s.boa(['jobs', 'show', String(body.id)]);
    expect(show.stderr).toBe('');
    expect(show.status).toBe(0);
    expect(show.stdout).toMatch(/^GPUs\s/m);
    expect(show.stdout).not.toMatch(/^logs\s/m);
  });

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

  it('notes a job done without ever reporting progress, in show and list; one that reported has none', async () => {
    const s = await startCliService({ config: { local: { bootSeconds: 0, releaseSeconds: 0 } } });
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const silent = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'silent' })).body;
    const told = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'told' })).body;
    const rescaled = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'rescaled' })).body;
    await s.ticks(3);
    // The clients' first report, epoch 0 as soon as they run: progress, though no epoch went by.
    const report = await s.request('POST', `/v1/jobs/${told.id}/progress`, { statEpoch: 0 }, told.token);
    expect(report.status).toBe(200);
    // Rescaled before its client's first report (as a tick does: a new generation, its epoch's clock
    // kept), it reports epoch 0 from the new generation, which moves neither the epoch nor its clock.
    const job = s.service.state.jobs.get(rescaled.id)!;
    job.generation += 1;
    s.service.deps.repo.saveJobState(job);
    const late = { statEpoch: 0, generation: job.generation };
    expect((await s.request('POST', `/v1/jobs/${rescaled.id}/progress`, late, rescaled.token)).status).toBe(
      200,
    );
    for (const job of [silent, told, rescaled])
      expect((await s.request('POST', `/v1/jobs/${job.id}/complete`, undefined, job.token)).status).toBe(200);
    const silentView = (await s.request('GET', `/v1/jobs/${silent.id}`)).body;
    expect(silentView).toMatchObject({ reportedProgress: false, lastReportAt: null });
    for (const job of [told, rescaled])
      expect((await s.request('GET', `/v1/jobs/${job.id}`)).body).toMatchObject({
        reportedProgress: true,
        lastReportAt: new Date(s.clock.t).toISOString(),
      });
    const show = await s.boa(['jobs', 'show', 'silent']);
    expect(show.stdout).toMatch(/^state\s+done: ended without reporting progress$/m);
    expect(show.stdout).toMatch(/^last report\s+none$/m);
    for (const name of ['told', 'rescaled']) {
      const shown = (await s.boa(['jobs', 'show', name])).stdout;
      // Done after reporting epoch 0 alone: the epoch shown is that report's, and the note says so.
      expect(shown).toMatch(/^state\s+done: last reported epoch 1 of \d+$/m);
      expect(shown).toMatch(/^last report\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    }
    const list = (await s.boa(['jobs', 'list'])).stdout.split('\n');
    expect(list.find((line) => line.includes('silent'))).toMatch(/ended without reporting progress$/);
    for (const name of ['told', 'rescaled'])
      expect(list.find((line) => line.includes(name))).not.toContain('without reporting');
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

  it("prints the last lines a job's replica wrote (--tail, --generation), and says why when there are none", async () => {
    const { s } = await startProcessService(cleanups);
    const print = "for (let i = 1; i <= 5; i++) console.log('line ' + i); setInterval(() => {}, 1000);";
    const { body } = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', print] },
    });
    const waiting = await s.boa(['jobs', 'logs', String(body.id)]);
    expect(waiting.status).toBe(1);
    expect(waiting.stderr).toContain(
      `job ${body.id} has no log kept for rank 0: it has not run yet (it waits for GPUs: boa jobs show ${body.id})`,
    );
    const dropped = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', '0'] },
    });
    expect((await s.request('POST', `/v1/jobs/${dropped.body.id}/cancel`)).status).toBe(200);
    expect((await s.boa(['jobs', 'logs', String(dropped.body.id)])).stderr).toContain(
      `job ${dropped.body.id} has no log kept for rank 0: it never ran (cancelled before it had GPUs)`,
    );

    await untilLog(s, body.id, 'rank=0&tail=2', (text) => text === 'line 4\nline 5\n');
    const logs = await s.boa(['jobs', 'logs', String(body.id), '--tail', '2']);
    expect(logs.stdout).toBe('line 4\nline 5\n');
    expect(logs.status).toBe(0);
    const generation = (await s.request('GET', `/v1/jobs/${body.id}`)).body.generation;
    // --json: the lines with the run they are from, one document (it printed the bare log).
    const json = await s.boa(['--json', 'jobs', 'logs', String(body.id), '--tail', '2']);
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ job: body.id, rank: 0, generation, text: 'line 4\nline 5\n' });
    // A rank the job does not run now: the ranks it runs are named.
    const ranks = (await s.request('GET', `/v1/jobs/${body.id}/allocation`)).body.nodes.length as number;
    const named = ranks === 1 ? 'rank 0 only' : `ranks 0 to ${ranks - 1}`;
    expect((await s.boa(['jobs', 'logs', String(body.id), '--rank', '9'])).stderr).toContain(
      `no log kept for rank 9: it runs ${named} now (generation ${generation}; an older generation's: --generation)`,
    );
    const api = await fetch(`${s.url}/v1/jobs/${body.id}/logs?tail=1`, {
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(await api.text()).toBe('line 5\n');
    expect(api.headers.get('boa-generation')).toBe(String(generation));
    const none = await s.boa(['jobs', 'logs', String(body.id), '--generation', String(generation + 5)]);
    expect(none.stderr).toContain(
      `no log kept for generation ${generation + 5}, rank 0: its newest generation is ${generation} (a later one begins at its next restart or rescale)\n`,
    );
    // The job's own token reads its logs; another job's token does not.
    const other = await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    const own = await s.request('GET', `/v1/jobs/${body.id}/logs?tail=1`, undefined, body.token);
    expect(own.status).toBe(200);
    expect((await s.request('GET', `/v1/jobs/${body.id}/logs`, undefined, other.body.token)).status).toBe(
      401,
    );
    // A job that launches itself has no log here, and is told why.
    const selfLaunched = await s.boa(['jobs', 'logs', String(other.body.id)]);
    expect(selfLaunched.stderr).toContain('launches itself (it was submitted without a command)');
    const bad = await s.boa(['jobs', 'logs', String(body.id), '--tail', '0']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr).toMatch(/tail/);
    // A replica that has written nothing: an empty stdout, and stderr says so.
    const quiet = await s.request('POST', '/v1/jobs', {
      class: 'cifar10',
      workload: { command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] },
    });
    for (let i = 0; i < 100; i++) {
      if ((await s.request('GET', `/v1/jobs/${quiet.body.id}/logs`)).status === 200) break;
      await s.ticks(1);
      await s.service.execution.settle();
      await new Promise((r) => setTimeout(r, 50));
    }
    const silent = await s.boa(['jobs', 'logs', String(quiet.body.id)]);
    expect(silent).toMatchObject({ status: 0, stdout: '' });
    expect(silent.stderr).toBe(`boa: job ${quiet.body.id}'s rank 0 has written nothing yet\n`);

    // Ended, it holds no GPUs to say how many replicas it ran: the ranks whose logs are kept say it.
    expect((await s.request('POST', `/v1/jobs/${body.id}/cancel`)).status).toBe(200);
    expect((await s.boa(['jobs', 'logs', String(body.id), '--rank', '9'])).stderr).toContain(
      `no log kept for rank 9: generation ${generation}, its newest with a log, has the logs of ${named}`,
    );
    const asked = await s.boa([
      'jobs',
      'logs',
      String(body.id),
      '--rank',
      '9',
      '--generation',
      String(generation),
    ]);
    expect(asked.stderr).toContain(
      `no log kept for generation ${generation}, rank 9: generation ${generation} has the logs of ${named}`,
    );
    const ended = (await s.request('GET', `/v1/jobs/${body.id}`)).body.generation;
    const past = await s.boa(['jobs', 'logs', String(body.id), '--generation', String(ended + 1)]);
    expect(past.stderr).toContain(
      `no log kept for generation ${ended + 1}, rank 0: it has ended (cancelled), and generation ${generation} is its newest with a log of rank 0\n`,
    );

    // A service that runs no jobs keeps no logs.
    const plain = await startCliService();
    cleanups.push(plain.close);
    const registered = await plain.request('POST', '/v1/jobs', { class: 'cifar10' });
    const refused = await plain.boa(['jobs', 'logs', String(registered.body.id)]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('this service runs no jobs (no executor)');
  });

  it('says nothing of the budget when one is set', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const submit = await s.boa(['jobs', 'submit', 'cifar10', '--self-launched']);
    expect(submit.status).toBe(0);
    // No name, none shown.
    expect(submit.stdout).toMatch(/^job\s+1 \(cifar10, waiting\)$/m);
    expect(submit.stdout).not.toMatch(/^budget/m);
  });

  it('lists the newest jobs when there are more than --limit, and says older ones are left out', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    for (const name of ['a', 'b', 'c', 'd']) {
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name })).status).toBe(201);
    }
    // Four reads of the same jobs: at once.
    const [list, older, oldest, all] = await Promise.all([
      s.boa(['jobs', 'list', '--limit', '2']),
      s.boa(['jobs', 'list', '--limit', '2', '--before', '3']),
      s.boa(['jobs', 'list', '--limit', '2', '--before', '2']),
      s.boa(['jobs', 'list', '--limit', '10']),
    ]);
    expect(list.status).toBe(0);
    // The two newest, oldest first: a job submitted after the first page is never hidden.
    expect(rows(list.stdout).map((r) => r[1])).toEqual(['c', 'd']);
    expect(list.stderr).toBe(
      'the newest 2 jobs are shown; older ones: --before 3 (or --limit N, up to 10000)\n',
    );
    // The page before it, as the hint says: the rest, and a short page says nothing.
    expect(rows(older.stdout).map((r) => r[1])).toEqual(['a', 'b']);
    // A full page that reaches the first job names no page before it (a newcomer was sent to an empty one).
    expect(older.stderr).toBe('');
    expect(rows(oldest.stdout).map((r) => r[1])).toEqual(['a']);
    expect(oldest.stderr).toBe('');
    expect(rows(all.stdout).map((r) => r[1])).toEqual(['a', 'b', 'c', 'd']);
    expect(all.stderr).toBe('');
    const api = await s.request('GET', '/v1/jobs?limit=3');
    expect(api.body.jobs.map((j: { name: string }) => j.name)).toEqual(['b', 'c', 'd']);
    const page = await s.request('GET', '/v1/jobs?limit=3&before=4&state=waiting');
    expect(page.body.jobs.map((j: { name: string }) => j.name)).toEqual(['a', 'b', 'c']);
    expect((await s.request('GET', '/v1/jobs?before=0')).body.error).toMatchObject({ field: 'before' });
  });

  it('lists the jobs that ended last, newest first, with --ended (what finished lately); -q only their ids', async () => {
    const s = await startCliService();
    cleanups.push(s.close);
    for (const name of ['a', 'b', 'c', 'd']) {
      expect((await s.request('POST', '/v1/jobs', { class: 'cifar10', name })).status).toBe(201);
    }
    expect((await s.request('POST', '/v1/jobs/3/cancel')).status).toBe(200);
    await s.ticks(1);
    expect((await s.request('POST', '/v1/jobs/1/cancel')).status).toBe(200);
    // Reads of the same jobs, and refusals: none depends on another, all at once.
    const [ended, last, some, ids, quiet, both, paged] = await Promise.all([
      s.boa(['jobs', 'list', '--ended']),
      s.boa(['jobs', 'list', '--ended', '--limit', '1']),
      s.boa(['jobs', 'list', '--ended', '--state', 'waiting,cancelled']),
      s.boa(['jobs', 'list', '-q', '--ended']),
      s.boa(['jobs', 'list', '--quiet', '--state', 'waiting']),
      s.boa(['--json', 'jobs', 'list', '-q']),
      s.boa(['jobs', 'list', '--ended', '--before', '3']),
    ]);
    expect(ended.stderr).toBe('');
    expect(ended.status).toBe(0);
    // The last to end first; the jobs still waiting are not among them.
    expect(rows(ended.stdout).map((r) => r[1])).toEqual(['a', 'c']);
    expect(rows(last.stdout).map((r) => r[1])).toEqual(['a']);
    expect(last.stderr).toBe('the last 1 jobs to end are shown; more: --limit N (up to 10000)\n');
    // With --state, of those states: the waiting ones, which have not ended, after the ended.
    expect(
      rows(some.stdout)
        .map((r) => r[1])
        .slice(0, 2),
    ).toEqual(['a', 'c']);
    expect(
      rows(some.stdout)
        .map((r) => r[1])
        .sort(),
    ).toEqual(['a', 'b', 'c', 'd']);
    // Only the ids, one a line, for xargs; the same rows.
    expect(ids).toMatchObject({ status: 0, stdout: '1\n3\n', stderr: '' });
    expect(quiet.stdout).toBe('2\n4\n');
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--quiet prints only the ids/);
    expect(paged.status).toBe(2);
    expect(paged.stderr).toMatch(/--ended .* has no pages: give --limit N/);
  });
});
