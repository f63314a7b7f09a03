/**
 * boa in the simulator narrows jobs to the cluster's maximum when it is below the budget's GPUs, as the
 * service narrows them to its node group's (src/service/tick-widths.ts): narrowed to the budget's GPUs
 * only, the jobs the cluster could not hold waited whole while the others kept wide widths.
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
for (let i = 0; i < 10; i++) csv.push(`job-${i},0,cifar10,1,128`);
const trace = parseTrace(csv.join('\n'));

describe('boa under a cluster maximum below its budget', () => {
  it('runs eight cifar10 jobs at a GPU each on 2 four-GPU nodes at a budget of 40, not one wide', () => {
    let mostRunning = 0;
    // The widths of the jobs running while some still waited (ten submitted, eight GPUs).
    const whileQueued = new Set<number>();
    const { result } = simulate({
      trace,
      policy: 'boa',
      options: { budget: 40 },
      profiles,
      truthOf: truthProvider(POLLUX),
      config: { maxNodes: 2 },
      observer: (tick) => {
        const widths = [...tick.allocations.values()].map((gpus) => gpus.length).filter((n) => n > 0);
        mostRunning = Math.max(mostRunning, widths.length);
        if (tick.activeJobs.length > widths.length) for (const w of widths) whileQueued.add(w);
      },
    });
    expect(result.completed).toBe(10);
    expect(mostRunning).toBe(8);
    expect([...whileQueued]).toEqual([1]);
  });
});
