/**
 * docs/simulator.md against the offline scripts it documents: every flag each script takes is named on
 * the page, every `--flag` the page names is one a script takes, and every policy variant the scripts
 * accept is listed. Flags are added in code and described in prose; nothing else ties the two together
 * (the page had left out eight variants and four of the demo's flags).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { VARIANTS_HELP } from '../../scripts/lib/boa-variants.ts';
import { runScriptAsync } from '../helpers/run-script.ts';
import { REPO } from './markdown-files.ts';

/** The scripts the page documents, as `npm run -s NAME` runs them. */
const SCRIPTS = [
  'profiles',
  'frontier',
  'simulate',
  'compare',
  'comparison-table',
  'compare-merge',
  'gen-trace',
  'stage-profiles',
  'bench-sim',
  'demo',
];

/** Flags the page names that are no script's, each with where it belongs. */
const OTHER_TOOLS_FLAGS = new Set([
  '--help', // commander's own, on every script
  '--svg', // `boa frontier --svg`, the CLI's, which draws the chart the dashboard draws
]);

/** The `--flags` written in the Markdown, URLs left out. */
function flagsIn(markdown: string): Set<string> {
  return new Set(markdown.match(/(?<![\w/-])--[a-z][a-z-]*[a-z]/g) ?? []);
}

const doc = readFileSync(join(REPO, 'docs/simulator.md'), 'utf8');
const flagsByScript = new Map<string, string[]>();

beforeAll(async () => {
  // One at a time: each loads tsx and the script's imports, and the machine is shared.
  for (const script of SCRIPTS) {
    const run = await runScriptAsync(`${script}.ts`, ['--help']);
    expect(run.status, `${script} --help: ${run.stderr}`).toBe(0);
    // Some scripts print their help on stderr.
    const flags = [...`${run.stdout}\n${run.stderr}`.matchAll(/^ {2}(?:-\w, )?(--[a-z][a-z-]*)/gm)].map(
      ([, flag = '']) => flag,
    );
    flagsByScript.set(script, flags);
  }
}, 120_000);

describe('docs/simulator.md', () => {
  it('names every flag of the scripts it documents', () => {
    const missing = [...flagsByScript].flatMap(([script, flags]) =>
      flags.filter((flag) => flag !== '--help' && !flagsIn(doc).has(flag)).map((flag) => `${script} ${flag}`),
    );
    expect([...flagsByScript.values()].flat().length).toBeGreaterThan(60);
    expect(missing).toEqual([]);
  });

  it('names no flag those scripts do not take', () => {
    const known = new Set([...flagsByScript.values()].flat());
    expect([...flagsIn(doc)].filter((flag) => !known.has(flag) && !OTHER_TOOLS_FLAGS.has(flag))).toEqual([]);
  });

  it('lists every policy variant the scripts accept', () => {
    const variants = VARIANTS_HELP.match(/(?<![\w@])[\w*-]+@[a-z]+[A-Z]?\b/g) ?? [];
    expect(variants.length).toBeGreaterThan(15);
    expect(variants.filter((variant) => !doc.includes(`\`${variant}\``))).toEqual([]);
  });
});
