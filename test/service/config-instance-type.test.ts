import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, readConfigFile, resolveConfig } from '../../src/service/config.ts';
import { configFromEnv, unknownEnv } from '../../src/service/config-env.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function configFile(settings: Record<string, unknown>): Record<string, unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'boa-config-instance-'));
  dirs.push(dir);
  const file = join(dir, 'boa.json');
  writeFileSync(file, JSON.stringify(settings));
  return readConfigFile(file);
}

const fromEnv = (env: Record<string, string>) => resolveConfig(configFromEnv(env));

describe('the node price and GPUs follow the instance type', () => {
  it.each([
    ['g4dn.12xlarge', 4, 3.912],
    ['g4dn.xlarge', 1, 0.526],
    ['g4dn.metal', 8, 7.824],
  ])('BOA_INSTANCE_TYPE=%s: %d GPUs a node at $%d an hour', (type, gpus, price) => {
    expect(fromEnv({ BOA_INSTANCE_TYPE: type })).toMatchObject({
      instanceType: type,
      gpusPerNode: gpus,
      nodePricePerHour: price,
    });
  });

  it('defaults to g4dn.12xlarge: 4 GPUs at $3.912', () => {
    expect(resolveConfig()).toMatchObject({
      instanceType: 'g4dn.12xlarge',
      gpusPerNode: 4,
      nodePricePerHour: 3.912,
    });
  });

  it('an explicit price wins: the config file, then BOA_NODE_PRICE_PER_HOUR', () => {
    const file = configFile({ instanceType: 'g4dn.xlarge', nodePricePerHour: 0.2 });
    expect(resolveConfig(file).nodePricePerHour).toBe(0.2);
    const env = configFromEnv({ BOA_NODE_PRICE_PER_HOUR: '0.31' });
    expect(resolveConfig(file, env)).toMatchObject({ instanceType: 'g4dn.xlarge', nodePricePerHour: 0.31 });
    expect(
      fromEnv({
        BOA_INSTANCE_TYPE: 'p4d.24xlarge',
        BOA_GPUS_PER_NODE: '8',
        BOA_NODE_PRICE_PER_HOUR: '32.77',
      }),
    ).toMatchObject({ gpusPerNode: 8, nodePricePerHour: 32.77 });
  });

  it('a type whose price boa does not know has none (null), not the g4dn.12xlarge one', () => {
    expect(fromEnv({ BOA_INSTANCE_TYPE: 'g5.xlarge' })).toMatchObject({
      gpusPerNode: 1,
      nodePricePerHour: null,
    });
    expect(fromEnv({ BOA_INSTANCE_TYPE: 'p4d.24xlarge', BOA_GPUS_PER_NODE: '8' })).toMatchObject({
      gpusPerNode: 8,
      nodePricePerHour: null,
    });
  });

  it('BOA_NODE_PRICE_PER_HOUR is a variable boa reads', () => {
    expect(unknownEnv({ BOA_NODE_PRICE_PER_HOUR: '1' })).toEqual([]);
  });

  it.each([
    [{ BOA_NODE_PRICE_PER_HOUR: 'cheap' }, /BOA_NODE_PRICE_PER_HOUR must be a number, got "cheap"/],
    [
      { BOA_NODE_PRICE_PER_HOUR: '-1' },
      /BOA_NODE_PRICE_PER_HOUR must be >= 0 \(dollars per node-hour\) \(got -1\)/,
    ],
    // The GPUs per node decide how many nodes a width needs and what a paid node counts against the
    // budget: a count the instances do not have either leaves pods unplaceable or undercounts spend.
    [
      { BOA_INSTANCE_TYPE: 'g4dn.12xlarge', BOA_GPUS_PER_NODE: '8' },
      /BOA_GPUS_PER_NODE contradicts instanceType g4dn\.12xlarge, which has 4 GPUs: leave it unset or set it to 4, or choose a type with 8 GPUs \(g4dn\.metal, g5\.48xlarge, g6\.48xlarge\) \(got 8\)/,
    ],
    [
      { BOA_INSTANCE_TYPE: 'p4d.24xlarge' },
      /instance type p4d\.24xlarge is not one boa knows the GPUs of \(g4dn, g5, g6\): set gpusPerNode \(BOA_GPUS_PER_NODE\)/,
    ],
  ])('refuses %j, naming the setting and what is allowed', (env, message) => {
    expect(() => fromEnv(env)).toThrow(ConfigError);
    expect(() => fromEnv(env)).toThrow(message);
  });

  it('names the file for a contradiction written there', () => {
    const file = configFile({ instanceType: 'g4dn.xlarge', gpusPerNode: 4 });
    expect(() => resolveConfig(file)).toThrow(
      /gpusPerNode in .*boa\.json contradicts instanceType g4dn\.xlarge, which has 1 GPU:/,
    );
  });
});
