/**
 * docs/service.md against the environment the service reads: every BOA_* variable it reads is in the
 * settings, and every one the page names is read. Variables are read in code and described in prose;
 * nothing else ties the two together (the page once left out eleven of them, among them
 * BOA_LOG_KEEPALIVE_SECONDS and BOA_ROLLBACK_TO_COPY).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configFromEnv, SERVICE_ENV } from '../../src/service/config-env.ts';
import { runScriptAsync } from '../helpers/run-script.ts';
import { REPO } from './markdown-files.ts';

/** Flags the page names that are not the service's, each with where it belongs. */
const OTHER_TOOLS_FLAGS = new Set([
  '--help', // commander's own
  '--prior-rate', // `boa classes put --prior-rate`, the CLI's
  '--rank', // `boa jobs logs 3 --rank 1`, the CLI's
  '--svg', // `boa frontier --svg`, the CLI's
]);

/** The `--flags` written in the Markdown, URLs left out. */
function flagsIn(markdown: string): Set<string> {
  return new Set(markdown.match(/(?<![\w/-])--[a-z][a-z-]*[a-z]/g) ?? []);
}

/** Names the page gives that the service does not read, each with why. */
const NAMED_NOT_READ = new Set([
  'BOA_TICK_SECOND', // the misspelling the `unknown_env` warning is shown with
]);

/** The BOA_* variables configFromEnv reads, recorded as it reads them from an empty environment. */
function readByConfigFromEnv(): string[] {
  const read = new Set<string>();
  const env = new Proxy({} as Record<string, string | undefined>, {
    get(target, key) {
      if (typeof key === 'string' && key.startsWith('BOA_')) read.add(key);
      return Reflect.get(target, key);
    },
  });
  configFromEnv(env);
  return [...read];
}

/** The BOA_* variables written in the Markdown (`BOA_*` itself left out). */
function variablesIn(markdown: string): Set<string> {
  return new Set(markdown.match(/\bBOA_[A-Z0-9_]*[A-Z0-9]\b/g) ?? []);
}

const doc = readFileSync(join(REPO, 'docs/service.md'), 'utf8');
const main = readFileSync(join(REPO, 'src/service/main.ts'), 'utf8');

describe('docs/service.md', () => {
  it('lists every variable the service reads among those it knows (else a set one is warned about as unknown)', () => {
    const read = readByConfigFromEnv();
    expect(read.length).toBeGreaterThan(20);
    expect(read.filter((name) => !SERVICE_ENV.includes(name))).toEqual([]);
    // The rest are read by the service's entry point itself (--log-format's, the rollback flag).
    const rest = SERVICE_ENV.filter((name) => !read.includes(name));
    expect(rest.filter((name) => !main.includes(`'${name}'`) && !main.includes(`env.${name}`))).toEqual([]);
  });

  it('names every variable the service reads', () => {
    expect(SERVICE_ENV.filter((name) => !doc.includes(`\`${name}\``))).toEqual([]);
  });

  it('names no variable the service does not read', () => {
    const unread = [...variablesIn(doc)].filter(
      (name) => !SERVICE_ENV.includes(name) && !NAMED_NOT_READ.has(name),
    );
    expect(unread).toEqual([]);
  });

  it('names every flag of `npm start`, and no flag it does not take', async () => {
    // What `npm start` runs (runScriptAsync resolves from scripts/).
    const help = await runScriptAsync('../src/service/main.ts', ['--help']);
    expect(help.status, help.stderr).toBe(0);
    const flags = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map(([, flag = '']) => flag);
    expect(flags.length).toBeGreaterThan(10);
    expect(flags.filter((flag) => flag !== '--help' && !flagsIn(doc).has(flag))).toEqual([]);
    const unknown = [...flagsIn(doc)].filter((flag) => !flags.includes(flag) && !OTHER_TOOLS_FLAGS.has(flag));
    expect(unknown).toEqual([]);
  }, 60_000);
});
