/**
 * boa in the simulator narrows jobs to the GPUs of the whole nodes the spend ceiling allows, as the
 * service does (src/service/tick-widths.ts). Narrowed to the ceiling's fractional GPUs instead, the
 * plan kept widths the nodes could not hold, and placement left jobs waiting behind wider ones.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const csv = ['name,time,application,num_replicas,batch_size'];
for (let i = 0; i < 12; i++) csv.push(`job-${i},0,cifar10,1,128`);
const trace = parseTrace(csv.join('\n'));

describe('boa under a spend ceiling between node boundaries', () => {
  it('at a budget of 14 (three 4-GPU nodes) runs all twelve jobs at a GPU each, none wider while any waits', () => {
    let firstRunning: number[] | undefined;
    const widthsWhileWaiting = new Set<number>();
    const { result } = simulate({
      trace,
      policy: 'boa',
      options: { budget: 14 },
      profiles,
      truthOf: truthProvider(POLLUX),
      observer: (tick) => {
        const widths = [...tick.allocations.values()].map((gpus) => gpus.length).filter((n) => n > 0);
        if (widths.length === 0) return;
        firstRunning ??= widths;
        if (tick.activeJobs.length > widths.length) for (const w of widths) widthsWhileWaiting.add(w);
      },
    });
    expect(result.completed).toBe(12);
    expect(firstRunning).toEqual(Array.from({ length: 12 }, () => 1));
    expect([...widthsWhileWaiting]).toEqual([]);
  });
});
