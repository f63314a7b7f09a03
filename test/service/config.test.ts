import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfigFile, resolveConfig } from '../../src/service/config.ts';
import { configFromEnv, unknownEnv } from '../../src/service/config-env.ts';
import { fromSource } from '../../src/service/config-sources.ts';

describe('service configuration', () => {
  it('has an embedded default: local pool, ./data, port 8080, 60 s ticks, 15 min calculator', () => {
    expect(resolveConfig()).toMatchObject({
      cloud: 'local',
      dataDir: './data',
      port: 8080,
      tickSeconds: 60,
      calculatorMinutes: 15,
      rateWindowHours: 24,
      keptWidthWaitMinutes: 60,
    });
  });

  it('layers file < environment < flags, merging nested settings', () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-config-'));
    const file = join(dir, 'boa.json');
    writeFileSync(file, JSON.stringify({ port: 9000, tickSeconds: 30, local: { bootSeconds: 10 } }));
    const env = configFromEnv({ BOA_PORT: '9100', BOA_CLOUD: 'local', BOA_MAX_NODES: '12' });
    const config = resolveConfig(readConfigFile(file), env, { port: 9200 });
    expect(config.port).toBe(9200);
    expect(config.tickSeconds).toBe(30);
    expect(config.maxNodes).toBe(12);
    expect(config.local).toEqual({ maxNodes: 64, bootSeconds: 10, releaseSeconds: 30 });
  });

  it('reads the AWS settings from the environment the CDK app sets', () => {
    const env = configFromEnv({
      BOA_CLOUD: 'aws',
      BOA_CLUSTER_NAME: 'boa',
      BOA_NODEGROUP_NAME: 'gpu',
      AWS_REGION: 'us-east-1',
      BOA_TOKEN: 'a-token-of-enough-length',
    });
    expect(resolveConfig(env)).toMatchObject({
      cloud: 'aws',
      aws: { clusterName: 'boa', nodegroupName: 'gpu', region: 'us-east-1' },
    });
  });

  it.each([
    [{ cloud: 'aws' }, /aws: cloud "aws" needs aws\.clusterName and aws\.nodegroupName/],
    [{ port: 70000 }, /port must be between 1 and 65535/],
    [{ port: 0 }, /port: port must be between 1 and 65535 \(0, a random port, is not supported\)/],
    [{ cloud: 'gcp' }, /cloud must be one of "local", "aws"/],
    [{ tickSeconds: 0 }, /tickSeconds: tickSeconds must be > 0/],
    // On AWS each tick's Heartbeat is what the guard outside boa reads (5 minutes of silence at least).
    [
      { cloud: 'aws', aws: { clusterName: 'c', nodegroupName: 'g' }, tickSeconds: 1200 },
      /tickSeconds: tickSeconds must be at most 120 with cloud "aws", got 1200: each tick publishes the Heartbeat/,
    ],
    [{ token: 'short' }, /token: token must be at least 16 characters/],
    // From a Secret or an env file with a trailing newline: no caller could ever send it.
    [
      { token: 'operator-token-0123456789\n' },
      /token: token must be visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\): no spaces, line breaks/,
    ],
    [
      { token: 'operator token 0123456789' },
      /token: token must be visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\): no spaces, line breaks/,
    ],
    // A control character passed the old "no spaces" rule, and no client could send the token.
    [
      { token: 'abcdefghij\x1bklmnopqrstuvwxyz' },
      /token: token must be visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\): .*control characters/,
    ],
    [
      { token: 'abcdefgh\x00ijklmnopqrstuvwxyz' },
      /token: token must be visible ASCII \(! to ~\) or Latin-1 \(¡ to ÿ\): .*control characters/,
    ],
    [{ guardMinutes: 0 }, /guardMinutes must be > 0/],
    [{ colour: 'blue' }, /unknown setting "colour"/],
    [
      { budgetWindowHours: 2, budgetHorizonHours: 2 },
      /budgetHorizonHours must be below budgetWindowHours \(2\)/,
    ],
    [{ budgetLookaheadHours: 0.5 }, /budgetLookaheadHours must be at least budgetHorizonHours \(1\)/],
    [
      { budgetWindowHours: 6, budgetLookaheadHours: 6 },
      /budgetLookaheadHours must be at least budgetHorizonHours \(1\) and below budgetWindowHours \(6\), got 6/,
    ],
    [{ nodes: { notReadyGraceSeconds: 600 } }, /notReadyGraceSeconds must be at most 300: Kubernetes evicts/],
    [{ rateWindowHours: 2 }, /rateRiseHours must be below rateWindowHours \(2\), got 2/],
    [{ rateRiseHours: -1 }, /rateRiseHours must be >= 0 \(0: no rise detection\)/],
    [
      { keptWidthWaitMinutes: -5 },
      /keptWidthWaitMinutes must be >= 0 \(0: kept widths never make a job wait\)/,
    ],
  ])('refuses %j, naming the setting', (layer, message) => {
    expect(() => resolveConfig(layer)).toThrow(ConfigError);
    expect(() => resolveConfig(layer)).toThrow(message);
  });

  it('names an unknown setting, the file it is in and the setting it may have meant', () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-config-'));
    try {
      const file = join(dir, 'boa.json');
      writeFileSync(file, JSON.stringify({ tickSecond: 3, colour: 'blue', local: { bootSecs: 5, zzz: 1 } }));
      const error = (() => {
        try {
          resolveConfig(readConfigFile(file));
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(ConfigError);
      const message = error!.message;
      expect(message).toContain(`unknown setting "tickSecond" in ${file} (did you mean tickSeconds?)`);
      expect(message).toContain(`unknown setting "colour" in ${file} (the settings are in docs/service.md)`);
      expect(message).toContain(
        `unknown setting "local.bootSecs" in ${file} (did you mean local.bootSeconds?)`,
      );
      expect(message).toContain(
        `unknown setting "local.zzz" in ${file} (local takes maxNodes, bootSeconds, releaseSeconds)`,
      );
      expect(message).not.toMatch(/Unrecognized key|\(config\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Found in review (2026-12-04), the four below.
  it('refuses an empty host: Node binds it on every address, and BOA_URL made of it is "http://:8080"', () => {
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { host: '' });
    expect(() => resolveConfig(file)).toThrow(/host .*boa\.json.*not empty/);
  });

  it('names a nested setting as it was written: its variable, or its dotted key in the file once', () => {
    expect(() => resolveConfig({}, configFromEnv({ BOA_JOBS_NAMESPACE: 'Bad_NS' }))).toThrow(
      /^invalid configuration: BOA_JOBS_NAMESPACE /,
    );
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { nodes: { notReadyGraceSeconds: -1 } });
    let message = '';
    try {
      resolveConfig(file);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/^invalid configuration: nodes\.notReadyGraceSeconds in boa\.json /);
  });

  it('takes a blank variable for unset, as an empty one', () => {
    // Number(" ") is 0: BOA_MAX_NODES=" " capped the pool at no nodes.
    expect(resolveConfig({}, configFromEnv({ BOA_MAX_NODES: ' ' })).maxNodes).toBe(
      resolveConfig({}).maxNodes,
    );
    // An empty list replaced the file's pull secrets.
    const file = fromSource(
      { kind: 'file', path: 'boa.json' },
      { kubernetes: { imagePullSecrets: ['regcred'] } },
    );
    const env = configFromEnv({ BOA_JOBS_NAMESPACE: 'jobs', BOA_IMAGE_PULL_SECRETS: ' , ' });
    expect(resolveConfig(file, env).kubernetes?.imagePullSecrets).toEqual(['regcred']);
  });

  it("reads a followed log's keepalive from BOA_LOG_KEEPALIVE_SECONDS, refused out of range naming it", () => {
    expect(resolveConfig({}, configFromEnv({ BOA_LOG_KEEPALIVE_SECONDS: '30' })).logKeepaliveSeconds).toBe(
      30,
    );
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { logKeepaliveSeconds: 20 });
    expect(resolveConfig(file, configFromEnv({ BOA_LOG_KEEPALIVE_SECONDS: '5' })).logKeepaliveSeconds).toBe(
      5,
    );
    expect(() => resolveConfig({}, configFromEnv({ BOA_LOG_KEEPALIVE_SECONDS: '301' }))).toThrow(
      /^invalid configuration: BOA_LOG_KEEPALIVE_SECONDS must be at most 300: a reader waits 3 of them/,
    );
    expect(() => resolveConfig({}, configFromEnv({ BOA_LOG_KEEPALIVE_SECONDS: '0' }))).toThrow(
      /BOA_LOG_KEEPALIVE_SECONDS must be more than 0 \(seconds between keepalives of a quiet followed log\)/,
    );
    expect(() => configFromEnv({ BOA_LOG_KEEPALIVE_SECONDS: 'soon' })).toThrow(
      'BOA_LOG_KEEPALIVE_SECONDS must be a number, got "soon"',
    );
    expect(unknownEnv({ BOA_LOG_KEEPALIVE_SECONDS: '30' })).toEqual([]);
  });

  it('names a bad environment variable and an unreadable file', () => {
    expect(() => configFromEnv({ BOA_PORT: 'eighty' })).toThrow(/BOA_PORT must be a number, got "eighty"/);
    expect(() => readConfigFile('/nonexistent/boa.json')).toThrow(
      /cannot read config file \/nonexistent\/boa\.json: ENOENT/,
    );
  });
});
