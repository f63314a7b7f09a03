import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderStatus } from '../../src/cli/commands/status.ts';
import { hasScript, onTerminal, startCliService } from './cli-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function started() {
  const s = await startCliService();
  cleanups.push(s.close);
  return s;
}

const TINY = {
  name: 'tiny',
  weight: 1,
  rescaleSeconds: 10,
  epochs: [{ workSeconds: 100, speedup: { '1': 1, '2': 1.5, '4': 2 } }],
};

describe('boa status', () => {
  it('shows the node group, GPUs and jobs the service reports', async () => {
    const s = await started();
    const idle = await s.boa(['status']);
    expect(idle.status).toBe(0);
    expect(idle.stdout).toMatch(/^nodes\s+.* desired, not listed yet \(no tick since boa started\)/m);
    expect(idle.stdout).toMatch(/^last tick\s+none yet$/m);
    expect(idle.stdout).toMatch(/^plan\s+none yet/m);

    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.request('POST', '/v1/jobs', { class: 'bert' });
    await s.ticks(4); // long enough for the local pool's nodes to boot and the jobs to start
    const api = (await s.request('GET', '/v1/status')).body;
    expect(api.gpus.allocated).toBeGreaterThan(0); // the scenario must exercise non-zero numbers

    const run = await s.boa(['status']);
    expect(run.status).toBe(0);
    const g = api.nodeGroup;
    expect(run.stdout).toContain(
      `${g.desiredNodes} desired, ${g.actualNodes} actual, ${g.readyNodes} ready at the last tick (group min ${g.minSize}, max ${g.maxSize})`,
    );
    const lent = api.gpus.lent > 0 ? `, ${api.gpus.lent} lent by the idle fill,` : '';
    expect(run.stdout).toMatch(
      new RegExp(`^GPUs\\s+${api.gpus.allocated} allocated${lent} of ${api.gpus.paid} paid$`, 'm'),
    );
    // The idle fill's GPUs said apart from the plan's, only when there are some.
    const gpus = (g: object) => /^GPUs\s+(.*)$/m.exec(renderStatus({ ...api, gpus: g }))?.[1];
    expect(gpus({ allocated: 1, lent: 3, paid: 4 })).toBe('1 allocated, 3 lent by the idle fill, of 4 paid');
    expect(gpus({ allocated: 1, lent: 0, paid: 4 })).toBe('1 allocated of 4 paid');
    // Before the pool answers a listing after a start the counts are unknown, not 0.
    const nodes = (group: object) =>
      /^nodes\s+(.*)$/m.exec(renderStatus({ ...api, nodeGroup: { ...g, ...group } }))?.[1];
    expect(nodes({ actualNodes: null, readyNodes: null })).toBe(
      `${g.desiredNodes} desired, not listed yet (the node pool has not answered since boa started; nothing is resized) (group min ${g.minSize}, max ${g.maxSize})`,
    );
    const jobs = Object.entries(api.jobs as Record<string, number>).map(([state, n]) => `${n} ${state}`);
    expect(run.stdout).toMatch(new RegExp(`^jobs\\s+${jobs.join(', ')}$`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^last tick\\s+${api.lastTickAt.replace('.000Z', 'Z')} \\(`, 'm'));
  });
});

describe('boa status while an EKS update of its own runs', () => {
  it('says the update is still in progress beside the resize it carries', async () => {
    const s = await started();
    const api = (await s.request('GET', '/v1/status')).body;
    const at = '2026-11-30T12:00:00.000Z';
    const lastResize = { target: 3, status: 'requested', at };
    const text = renderStatus({
      ...api,
      nodeGroup: { ...api.nodeGroup, lastResize, updateInFlight: 'update-2' },
    });
    expect(text).toMatch(
      /^last resize\s+to 3 nodes, requested, at 2026-11-30T12:00:00Z.*; EKS update update-2 still in progress$/m,
    );
    const idle = renderStatus({ ...api, nodeGroup: { ...api.nodeGroup, lastResize, updateInFlight: null } });
    expect(idle).not.toMatch(/still in progress/);
  });
});

describe('boa status after a scale-in', () => {
  it('shows the latest node removed: scale-in terminates nodes and sends no resize', async () => {
    const s = await started();
    await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 });
    const { body } = await s.request('POST', '/v1/jobs', { class: 'cifar10' });
    await s.ticks(4);
    expect((await s.request('GET', '/v1/status')).body.nodeGroup.actualNodes).toBeGreaterThan(0);
    await s.request('POST', `/v1/jobs/${body.id}/cancel`);
    await s.ticks(4);
    const api = (await s.request('GET', '/v1/status')).body;
    const g = api.nodeGroup;
    // The last resize still names the scale-out: the removal is what explains the smaller group.
    expect(g.desiredNodes).toBeLessThan(g.lastResize.target);
    expect(g.lastRemoval).toMatchObject({ reason: 'scale-in', node: expect.stringMatching(/^local-/) });
    const run = await s.boa(['status']);
    expect(run.stdout).toMatch(
      new RegExp(
        `^last removal\\s+${g.lastRemoval.node} \\(scale-in\\), at ${g.lastRemoval.at.replace(/\.\d{3}Z$/, 'Z')}$`,
        'm',
      ),
    );
  });
});

describe('boa classes', () => {
  it('validates, puts with a prior rate, and lists a class profile', async () => {
    const s = await started();
    const file = join(s.cwd, 'tiny.json');
    writeFileSync(file, JSON.stringify(TINY));

    const valid = await s.boa(['classes', 'validate', file]);
    expect(valid.status).toBe(0);
    expect(valid.stdout).toBe(`${file}: valid class tiny (1 statistical epoch)\n`);
    expect(
      (await s.request('GET', '/v1/classes')).body.classes.map((c: { name: string }) => c.name),
    ).not.toContain('tiny');

    const put = await s.boa(['classes', 'put', file, '--prior-rate', '3']);
    expect(put.stderr).toBe('');
    expect(put.status).toBe(0);
    const stored = (await s.request('GET', '/v1/classes')).body.classes.find(
      (c: { name: string }) => c.name === 'tiny',
    );
    expect(stored).toMatchObject({ priorRatePerHour: 3, profile: TINY });

    const list = await s.boa(['classes', 'list']);
    expect(list.stdout).toMatch(/^tiny\s+3\.00\s+1\s+0\.03\s+1-4\s+10\s+1$/m);
  });

  it('refuses a bad profile with the API message and exit 2, saving nothing', async () => {
    const s = await started();
    const file = join(s.cwd, 'bad.json');
    writeFileSync(file, JSON.stringify({ ...TINY, epochs: [{ workSeconds: -5, speedup: { '1': 1 } }] }));
    for (const command of ['validate', 'put']) {
      const run = await s.boa(['classes', command, file]);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/^boa: invalid class profile: epochs\[0\]\.workSeconds: .*positive/);
    }
    const names = (await s.request('GET', '/v1/classes')).body.classes.map((c: { name: string }) => c.name);
    expect(names).not.toContain('tiny');

    const whole = await s.boa(['classes', 'put', join(import.meta.dirname, '../../data/profiles.json')]);
    expect(whole.status).toBe(2);
    expect(whole.stderr).toMatch(/is a whole profile file; give one class object/);
    const rate = await s.boa(['classes', 'put', file, '--prior-rate', 'often']);
    expect(rate.status).toBe(2);
    expect(rate.stderr).toBe('boa: --prior-rate must be a number, got "often"\n');
  });
});

describe('boa classes delete on a terminal', () => {
  it.skipIf(!hasScript)(
    'asks first (its profile goes with it); no keeps it; --yes and scripts are not asked',
    async () => {
      const s = await started();
      const file = join(s.cwd, 'tiny.json');
      writeFileSync(file, JSON.stringify(TINY));
      const names = async () =>
        (await s.request('GET', '/v1/classes')).body.classes.map((c: { name: string }) => c.name);
      expect((await s.boa(['classes', 'put', file])).status).toBe(0);

      const no = await onTerminal(s, ['classes', 'delete', 'tiny'], 'n\n');
      expect(no.output).toContain('delete class tiny? Its profile goes with it');
      expect(no.output).toContain('class tiny is kept');
      expect(no.status).toBe(1);
      expect(await names()).toContain('tiny');

      const yes = await onTerminal(s, ['classes', 'delete', 'tiny'], 'y\n');
      expect(yes.status).toBe(0);
      expect(await names()).not.toContain('tiny');

      expect((await s.boa(['classes', 'put', file])).status).toBe(0);
      const forced = await onTerminal(s, ['classes', 'delete', 'tiny', '--yes'], '');
      expect(forced.output).not.toContain('delete class tiny?');
      expect(await names()).not.toContain('tiny');
      expect((await s.boa(['classes', 'put', file])).status).toBe(0);
      const piped = await s.boa(['classes', 'delete', 'tiny']);
      expect(piped.stdout + piped.stderr).not.toContain('delete class tiny?');
      expect(piped.status).toBe(0);
      expect(await names()).not.toContain('tiny');
    },
    60_000,
  );
});
