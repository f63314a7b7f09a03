import type { z } from 'zod';
import { issueText } from '../core/issue-text.ts';

/**
 * Where each configuration layer came from, so an error names what the operator actually typed:
 * BOA_TICK_SECONDS for the environment, --tick-seconds for a flag, the file for a config file.
 */
const SOURCE = Symbol('boa.configSource');

export type ConfigSource = { kind: 'env' } | { kind: 'flags' } | { kind: 'file'; path: string };

type Layer = Record<string, unknown> & { [SOURCE]?: ConfigSource };

/** Marks a layer's origin (not enumerable: merging and validation never see it). */
export function fromSource<T extends Record<string, unknown>>(source: ConfigSource, layer: T): T {
  Object.defineProperty(layer, SOURCE, { value: source, enumerable: false });
  return layer;
}

const AWS_ENV: Record<string, string> = {
  region: 'AWS_REGION',
  clusterName: 'BOA_CLUSTER_NAME',
  nodegroupName: 'BOA_NODEGROUP_NAME',
};
const KUBERNETES_ENV: Record<string, string> = {
  namespace: 'BOA_JOBS_NAMESPACE',
  serviceAccountName: 'BOA_JOBS_SERVICE_ACCOUNT',
  imagePullSecrets: 'BOA_IMAGE_PULL_SECRETS',
};
/** Flags whose names are not the setting's name in kebab case. */
const FLAG_NAMES: Record<string, string> = { dataDir: '--data' };

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function nameIn(source: ConfigSource, path: readonly PropertyKey[]): string {
  const [key, sub] = path.map(String);
  if (source.kind === 'env') {
    if (key === 'aws' && sub) return AWS_ENV[sub] ?? sub;
    if (key === 'kubernetes' && sub) return KUBERNETES_ENV[sub] ?? sub;
    return `BOA_${snake(key!)}`;
  }
  if (source.kind === 'flags') return FLAG_NAMES[key!] ?? `--${kebab(key!)}`;
  return `${path.map(String).join('.')} in ${source.path}`;
}

/** Edit distance, for suggesting the setting a misspelt one meant. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** The known setting a typo most likely meant (case aside, or a few letters off), if any. */
export function closest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const scored = known.map((k) => ({
    k,
    d: k.toLowerCase() === lower ? 0 : distance(lower, k.toLowerCase()),
  }));
  const best = scored.sort((a, b) => a.d - b.d)[0];
  // Up to 3 letters in 10 off: bootSecs is bootSeconds, colour is not cloud.
  return best && best.d <= 0.3 * Math.max(key.length, best.k.length) ? best.k : undefined;
}

/**
 * An unknown setting (zod's unrecognized_keys) named with where it was written and what it may have
 * meant: strict settings refuse a typo, and "Unrecognized key" at "(config)" named neither.
 */
export function describeUnknownKeys(
  issue: { path: readonly PropertyKey[]; keys: readonly string[] },
  layers: readonly Layer[],
  known: readonly string[],
): string {
  const parent = issue.path.map(String);
  return issue.keys
    .map((key) => {
      const path = [...parent, key];
      const layer = [...layers].reverse().find((l) => {
        const at = parent.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], l);
        return at !== null && typeof at === 'object' && key in at;
      });
      const source = layer?.[SOURCE];
      const where = source?.kind === 'file' ? ` in ${source.path}` : '';
      const guess = closest(key, known);
      const hint = guess
        ? `did you mean ${[...parent, guess].join('.')}?`
        : parent.length > 0
          ? `${parent.join('.')} takes ${known.join(', ')}`
          : 'the settings are in docs/service.md';
      return `unknown setting "${path.join('.')}"${where} (${hint})`;
    })
    .join('; ');
}

/**
 * One validation issue as a phrase: the setting named as its last layer spelled it, with the value
 * given (never the token's). Without a tagged layer: `path: message`, as before.
 */
export function describeIssue(issue: z.core.$ZodIssue, layers: readonly Layer[]): string {
  const path = issue.path.map(String);
  const dotted = path.join('.') || '(config)';
  const key = path[0];
  const layer = key === undefined ? undefined : [...layers].reverse().find((l) => key in l);
  const source = layer?.[SOURCE];
  if (!layer || !source || key === undefined) return `${dotted}${issueText(issue)}`;
  const name = nameIn(source, issue.path);
  const value = path.reduce<unknown>(
    (at, k) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined),
    layer,
  );
  const got = key === 'token' || value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  const last = path.at(-1)!;
  // A nested setting's message names it dotted (`nodes.notReadyGraceSeconds must be ...`): replaced
  // whole, or the file's name came out as `nodes.nodes.notReadyGraceSeconds in boa.json`.
  const message = issue.message.includes(dotted)
    ? issue.message.replace(dotted, name)
    : issue.message.includes(last)
      ? issue.message.replace(last, name)
      : `${name}${issueText(issue)}`;
  return `${message}${got}`;
}
