import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readConfigFile, resolveConfig } from '../../src/service/config.ts';
import { configFromEnv } from '../../src/service/config-env.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function configFile(settings: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'boa-config-aws-'));
  dirs.push(dir);
  const file = join(dir, 'boa.json');
  writeFileSync(file, JSON.stringify(settings));
  return file;
}

describe('aws settings split between a config file and the environment', () => {
  it('an env BOA_CLUSTER_NAME keeps the file aws.region and aws.nodegroupName', () => {
    const file = configFile({
      cloud: 'aws',
      token: 'a-token-of-enough-length',
      aws: { region: 'eu-west-1', clusterName: 'boa', nodegroupName: 'gpu' },
    });
    // Only the cluster is overridden per environment (staging vs prod); AWS_REGION not set.
    const env = configFromEnv({ BOA_CLUSTER_NAME: 'boa-staging' });
    const config = resolveConfig(readConfigFile(file), env, {});
    expect(config.aws).toEqual({ region: 'eu-west-1', clusterName: 'boa-staging', nodegroupName: 'gpu' });
  });

  it('keeps aws.region when BOA_CLUSTER_NAME and BOA_NODEGROUP_NAME come from the env', () => {
    const file = configFile({ aws: { region: 'eu-west-1', clusterName: 'a', nodegroupName: 'b' } });
    const env = configFromEnv({ BOA_CLUSTER_NAME: 'boa', BOA_NODEGROUP_NAME: 'gpu' });
    expect(resolveConfig(readConfigFile(file), env).aws).toEqual({
      region: 'eu-west-1',
      clusterName: 'boa',
      nodegroupName: 'gpu',
    });
  });

  it('an env AWS_REGION still wins over the file region', () => {
    const file = configFile({ aws: { region: 'eu-west-1', clusterName: 'a', nodegroupName: 'b' } });
    const env = configFromEnv({ BOA_CLUSTER_NAME: 'boa', AWS_REGION: 'us-east-1' });
    expect(resolveConfig(readConfigFile(file), env).aws).toEqual({
      region: 'us-east-1',
      clusterName: 'boa',
      nodegroupName: 'b',
    });
  });
});
