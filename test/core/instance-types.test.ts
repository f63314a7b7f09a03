import { describe, expect, it } from 'vitest';
import { instanceTypeFacts } from '../../src/core/instance-types.ts';

describe('instance types boa knows', () => {
  it.each([
    ['g4dn.xlarge', 1, 0.526],
    ['g4dn.2xlarge', 1, 0.752],
    ['g4dn.4xlarge', 1, 1.204],
    ['g4dn.8xlarge', 1, 2.176],
    ['g4dn.16xlarge', 1, 4.352],
    ['g4dn.12xlarge', 4, 3.912],
    ['g4dn.metal', 8, 7.824],
  ])('%s: %d GPUs at $%d an hour on demand (us-east-1)', (type, gpus, price) => {
    expect(instanceTypeFacts(type)).toEqual({ gpus, pricePerHour: price });
  });

  it('knows the GPUs of g5 and g6 but not their price', () => {
    expect(instanceTypeFacts('g5.48xlarge')).toEqual({ gpus: 8 });
    expect(instanceTypeFacts('g6.12xlarge')).toEqual({ gpus: 4 });
  });

  it('knows nothing of other types, nor of names an object inherits', () => {
    expect(instanceTypeFacts('p4d.24xlarge')).toBeUndefined();
    expect(instanceTypeFacts('G4DN.XLARGE')).toBeUndefined();
    expect(instanceTypeFacts('constructor')).toBeUndefined();
    expect(instanceTypeFacts('toString')).toBeUndefined();
  });
});
