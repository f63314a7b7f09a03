/**
 * boa classes list says which epochs' speedups the plan reads as learned from the class's jobs
 * (GET /v1/classes inUse), the widths changed and the samples they came from, and their instance type.
 */
import { describe, expect, it } from 'vitest';
import { renderClasses } from '../../src/cli/commands/classes.ts';
import type { ClassProfile } from '../../src/core/profile.ts';

const profile: ClassProfile = {
  name: 'mymodel',
  weight: 1,
  rescaleSeconds: 30,
  epochs: [
    { workSeconds: 3600, speedup: { '1': 1, '2': 1.9, '8': 7.5 } },
    { workSeconds: 3600, speedup: { '1': 1, '8': 7.5 } },
  ],
};

describe('boa classes list', () => {
  it('names the learned speedups under the table, with their samples; an epoch as profiled says nothing', () => {
    const text = renderClasses({
      classes: [
        {
          name: 'mymodel',
          priorRatePerHour: 2,
          profile,
          inUse: {
            epochs: [
              {
                speedup: { '1': 1, '2': 1.9, '8': 4 },
                speedupLearned: true,
                samples: { '1': 3, '8': 4, unknown: 2 },
                samplesInstanceType: 'g4dn.12xlarge',
              },
              { speedup: { '1': 1, '8': 7.5 }, speedupLearned: false, samples: { '8': 2 } },
            ],
          },
        },
      ],
    });
    expect(text).toMatch(/^mymodel\s+2\.00\s+2\s+2\.00\s+1-8\s+30\s+1$/m);
    expect(text.split('\n').filter((line) => line.includes('learned'))).toEqual([
      'mymodel epoch 0: speedups learned from samples on g4dn.12xlarge (3 at 1 GPU, 4 at 8 GPUs, 2 without a width): 8 GPUs 7.5 -> 4.00',
    ]);
  });
});
