import { describe, expect, it } from 'vitest';
import { parseClassProfile, parseProfileFile } from '../../src/core/profile.ts';

const valid = () => ({
  version: 1,
  instanceType: 'g4dn.12xlarge',
  gpusPerNode: 4,
  classes: [
    {
      name: 'cifar10',
      weight: 1,
      rescaleSeconds: 30,
      epochs: [{ workSeconds: 372.1, speedup: { 1: 1, 2: 1.8, 4: 3.4 } }],
    },
  ],
});

// Test fixtures are spoiled field by field; a loose type keeps each case one line.
type Spoilable = any;

describe('profile file validation', () => {
  it('accepts a slightly superlinear speedup, as measured (caches)', () => {
    const file = valid();
    file.classes[0]!.epochs[0]!.speedup = { 1: 1, 2: 2.3, 4: 4.4 };
    expect(parseProfileFile(file).classes[0]?.epochs[0]?.speedup['2']).toBe(2.3);
  });

  it('accepts the documented format and defaults the weight', () => {
    const file = valid();
    delete (file.classes[0] as { weight?: number }).weight;
    expect(parseProfileFile(file).classes[0]?.weight).toBe(1);
  });

  it.each([
    ['version', (f: Spoilable) => (f.version = 2), /version: version must be 1/],
    [
      'a negative work',
      (f: Spoilable) => (f.classes[0].epochs[0].workSeconds = -1),
      /classes\[0\]\.epochs\[0\]\.workSeconds/,
    ],
    [
      'a width that is not an integer',
      (f: Spoilable) => (f.classes[0].epochs[0].speedup['1.5'] = 1.2),
      /speedup.*positive integer/,
    ],
    [
      'a missing width 1',
      (f: Spoilable) => delete f.classes[0].epochs[0].speedup['1'],
      /must list width "1"/,
    ],
    [
      'a zero speedup',
      (f: Spoilable) => (f.classes[0].epochs[0].speedup['2'] = 0),
      /classes\[0\]\.epochs\[0\]\.speedup\.2/,
    ],
    [
      'a speedup far past linear (a typo, a wrong unit)',
      (f: Spoilable) => (f.classes[0].epochs[0].speedup['2'] = 2048),
      /speedup\.2: speedup at 2 GPUs is 2048, more than 2x linear \(4\)/,
    ],
    ['an unknown field', (f: Spoilable) => (f.classes[0].color = 'red'), /classes\[0\].*color/],
    [
      'a duplicate class',
      (f: Spoilable) => f.classes.push(structuredClone(f.classes[0])),
      /classes\[1\]\.name: duplicate class "cifar10"/,
    ],
    // zod's default wording said as what the field must be.
    [
      'a missing rescaleSeconds',
      (f: Spoilable) => delete f.classes[0].rescaleSeconds,
      /p\.json classes\[0\]\.rescaleSeconds is missing \(a number\)/,
    ],
    [
      'a work given as a string',
      (f: Spoilable) => (f.classes[0].epochs[0].workSeconds = '372'),
      /classes\[0\]\.epochs\[0\]\.workSeconds must be a number, not a string/,
    ],
    ['gpusPerNode 0', (f: Spoilable) => (f.gpusPerNode = 0), /p\.json gpusPerNode must be > 0/],
    // A speedup table is a JSON object: zod's word for it ("record") means nothing to an operator.
    [
      'a missing speedup table',
      (f: Spoilable) => delete f.classes[0].epochs[0].speedup,
      /classes\[0\]\.epochs\[0\]\.speedup is missing \(an object\)/,
    ],
    [
      'a speedup table given as a list',
      (f: Spoilable) => (f.classes[0].epochs[0].speedup = [1, 1.8]),
      /classes\[0\]\.epochs\[0\]\.speedup must be an object, not an array/,
    ],
    [
      'no epochs',
      (f: Spoilable) => (f.classes[0].epochs = []),
      /classes\[0\]\.epochs: a class needs at least one/,
    ],
  ])('names the bad field for %s', (_what, spoil, message) => {
    const file = valid();
    spoil(file);
    expect(() => parseProfileFile(file, 'p.json')).toThrow(message);
  });
});

describe('class object validation (boa classes put)', () => {
  const tiny = { name: 'mine', rescaleSeconds: 30, epochs: [{ workSeconds: 60, speedup: { 1: 1, 2: 1.8 } }] };

  it('names a misspelt field and the fields allowed there, before the field it left missing', () => {
    expect(() => parseClassProfile({ ...tiny, epochs: [{ work: 60, speedup: { 1: 1 } }] })).toThrow(
      'invalid class profile: epochs[0], a statistical epoch, has no field "work"; its fields are workSeconds, speedup',
    );
    const { rescaleSeconds, ...rest } = tiny;
    expect(() => parseClassProfile({ ...rest, rescaleSecs: rescaleSeconds, extra: 1 })).toThrow(
      'invalid class profile: a class object has no field "rescaleSecs", "extra"; its fields are name, weight, rescaleSeconds, epochs',
    );
    expect(parseClassProfile(tiny).weight).toBe(1);
  });

  it('says the same of a class in a whole profile file (the one the service starts with)', () => {
    const file = { version: 1, instanceType: 'g4dn.12xlarge', gpusPerNode: 4, classes: [tiny, { ...tiny }] };
    const { rescaleSeconds, ...rest } = tiny;
    file.classes[1] = { ...rest, rescaleSecs: rescaleSeconds } as unknown as typeof tiny;
    expect(() => parseProfileFile(file, 'p.json')).toThrow(
      'invalid profile: p.json classes[1]: a class object has no field "rescaleSecs"; its fields are name, weight, rescaleSeconds, epochs',
    );
    file.classes[1] = { ...tiny, epochs: [{ work: 60, speedup: { 1: 1 } }] } as unknown as typeof tiny;
    expect(() => parseProfileFile(file, 'p.json')).toThrow(
      'invalid profile: p.json classes[1]: epochs[0], a statistical epoch, has no field "work"; its fields are workSeconds, speedup',
    );
  });
});
