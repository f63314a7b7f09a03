/**
 * classInUse keeps each class's last result while its profile and samples are the same (the tick reads
 * every class several times): a sample pushed or trimmed in place, or a profile replaced, is worked out
 * again, equal to a class read for the first time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { classInUse } from '../../src/service/class-in-use.ts';
import type { ClassState } from '../../src/service/state.ts';
import { startService } from './harness.ts';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const MYMODEL = {
  name: 'mymodel',
  weight: 1,
  rescaleSeconds: 30,
  epochs: [{ workSeconds: 3600, speedup: { '1': 1, '2': 1.9, '4': 3.6, '8': 7.5 } }],
};

async function booted() {
  const s = await startService({
    config: { tickSeconds: 60, local: { maxNodes: 8, bootSeconds: 0 }, budget: 8 },
  });
  cleanups.push(s.close);
  s.service.putClass(MYMODEL, 8);
  await s.service.planner.idle();
  return { svc: s.service, cls: s.service.state.classes.get('mymodel') as ClassState };
}

/** The class as read with nothing kept: a copy of its state the memo has never seen. */
const fresh = (svc: Parameters<typeof classInUse>[0], cls: ClassState) =>
  classInUse(svc, { ...cls, workSamples: Array.from(cls.workSamples, (e) => [...(e ?? [])]) });

describe('classInUse', () => {
  it('gives the kept result while nothing changed, and a new one after any change in place', async () => {
    const { svc, cls } = await booted();
    const first = classInUse(svc, cls);
    expect(classInUse(svc, cls)).toBe(first);
    // Samples at 4 and 8 GPUs, as jobs report them: the 8-GPU epochs as slow as 4x.
    const samples = cls.workSamples[0]!;
    for (let i = 0; i < 3; i++) samples.push({ workSeconds: 3600, width: 4 });
    for (let i = 0; i < 3; i++) samples.push({ workSeconds: 3600 * (7.5 / 4), width: 8 });
    const learned = classInUse(svc, cls);
    expect(learned).not.toBe(first);
    expect(learned.profile.epochs[0]!.speedup['8']).toBeLessThan(7.5);
    expect(learned).toEqual(fresh(svc, cls));
    // Numbers (samples stored before widths were kept): one taken from the middle and an equal one
    // pushed leave the same length and the same last sample, but other work.
    cls.workSamples[0] = [3000, 4000, 3500];
    const numbers = classInUse(svc, cls);
    cls.workSamples[0].splice(0, 1);
    cls.workSamples[0].push(3500);
    expect(cls.workSamples[0]).toEqual([4000, 3500, 3500]);
    const after = classInUse(svc, cls);
    expect(after.profile.epochs[0]!.workSeconds).not.toBe(numbers.profile.epochs[0]!.workSeconds);
    expect(after).toEqual(fresh(svc, cls));
    // A profile replaced (class-operations.ts puts a new object).
    cls.profile = { ...cls.profile, epochs: [{ ...cls.profile.epochs[0]!, workSeconds: 7200 }] };
    expect(classInUse(svc, cls)).toEqual(fresh(svc, cls));
    expect(classInUse(svc, cls).profile.epochs[0]!.workSeconds).not.toBe(
      after.profile.epochs[0]!.workSeconds,
    );
  });

  it('sees samples in an epoch that was a hole when last read', async () => {
    const { svc, cls } = await booted();
    cls.workSamples = new Array(cls.workSamples.length); // as a progress report's `??= []` finds them
    const before = classInUse(svc, cls);
    (cls.workSamples[0] ??= []).push(3000, 3100, 3200);
    expect(classInUse(svc, cls)).not.toBe(before);
    expect(classInUse(svc, cls)).toEqual(fresh(svc, cls));
  });
});
