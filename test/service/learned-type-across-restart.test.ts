/**
 * An epoch that runs across a restart of boa configured for another instance type (BOA_INSTANCE_TYPE
 * g4dn.12xlarge -> g5.12xlarge while a job runs on the group's old T4 nodes, which EKS keeps until it
 * replaces them) ran mostly on the old GPUs: its sample is not taken as the new type's (progress.ts
 * recordWorkSample). An epoch run across a restart on the same type is still sampled.
 */
import { afterEach, expect, it } from 'vitest';
import { nodesWorld } from './nodes-harness.ts';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const WORK = 3600;
const SPEEDUP_4 = 3.6;
const MYMODEL = {
  name: 'mymodel',
  weight: 1,
  rescaleSeconds: 30,
  epochs: [{ workSeconds: WORK, speedup: { '1': 1, '2': 1.9, '4': SPEEDUP_4 } }],
};
/** How much slower than its profile the class runs on the T4s. */
const SLOWER = 1.6;

/** One 4-GPU job of mymodel running on the group; restarted on each of `types`, it completes its epoch. */
async function epochAcrossRestarts(...types: string[]) {
  const w = nodesWorld({ onDisk: true, idleFill: false });
  cleanups.push(w.cleanup);
  const first = await w.start();
  first.boa.service.putClass(MYMODEL, 1);
  first.boa.service.setBudget(4);
  const { job, token } = first.boa.service.registerJob('mymodel', 'a');
  job.widths = [4];
  for (let i = 0; i < 8 && job.state !== 'running'; i++) await first.tick(1);
  expect(job.state).toBe('running');
  const startedAt = job.epochStartedAt!;
  const epochMs = (MYMODEL.rescaleSeconds + (WORK * SLOWER) / SPEEDUP_4) * 1000;
  // Most of the epoch before the restarts.
  let second = first;
  for (const [i, type] of types.entries()) {
    w.clock.t = Math.max(w.clock.t, startedAt + epochMs * (0.5 + i * 0.2));
    await second.boa.close();
    w.configureInstanceType(type);
    second = await w.start();
    expect(second.boa.service.job(job.id)).toMatchObject({ state: 'running', epochStartedAt: startedAt });
  }
  w.clock.t = startedAt + epochMs;
  const done = await second.boa.app.request(`/v1/jobs/${job.id}/complete`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
  });
  expect(done.status, await done.text()).toBe(200);
  const classes = await second.boa.app.request('/v1/classes', {
    headers: { authorization: `Bearer ${second.boa.token}` },
  });
  const body = (await classes.json()) as { classes: Array<{ name: string; inUse: { epochs: any[] } }> };
  return body.classes.find((c) => c.name === 'mymodel')!.inUse.epochs[0];
}

it('takes no sample of an epoch begun before a restart on another instance type', async () => {
  const onA10g = await epochAcrossRestarts('g5.12xlarge');
  expect(onA10g.samplesInstanceType).toBe('g5.12xlarge');
  expect(onA10g.samples).toEqual({});
  expect(onA10g.workSeconds).toBe(WORK);
});

it('still samples an epoch run across a restart on the same type', async () => {
  const onT4 = await epochAcrossRestarts('g4dn.12xlarge');
  expect(onT4.samples).toEqual({ '4': 1 });
});

it('takes none after a second restart on the new type either: the change is stored with its time', async () => {
  const onA10g = await epochAcrossRestarts('g5.12xlarge', 'g5.12xlarge');
  expect(onA10g.samples).toEqual({});
  expect(onA10g.workSeconds).toBe(WORK);
});
