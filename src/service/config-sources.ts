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
/** Flags whose names are not the setting's name in kebab case. */
const FLAG_NAMES: Record<string, string> = { dataDir: '--data' };

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

function nameIn(source: ConfigSource, path: readonly PropertyKey[]): string {
  const [key, sub] = path.map(String);
  if (source.kind === 'env') return key === 'aws' && sub ? (AWS_ENV[sub] ?? sub) : `BOA_${snake(key!)}`;
  if (source.kind === 'flags') return FLAG_NAMES[key!] ?? `--${kebab(key!)}`;
  return `${path.map(String).join('.')} in ${source.path}`;
}

/**
 * One validation issue as a phrase: the setting named as its last layer spelled it, with the value
 * given (never the token's). Without a tagged layer: `path: message`, as before.
 */
export function describeIssue(
  issue: { path: readonly PropertyKey[]; message: string },
  layers: readonly Layer[],
): string {
  const path = issue.path.map(String);
  const dotted = path.join('.') || '(config)';
  const key = path[0];
  const layer = key === undefined ? undefined : [...layers].reverse().find((l) => key in l);
  const source = layer?.[SOURCE];
  if (!layer || !source || key === undefined) return `${dotted}: ${issue.message}`;
  const name = nameIn(source, issue.path);
  const value = path.reduce<unknown>(
    (at, k) => (at && typeof at === 'object' ? (at as Record<string, unknown>)[k] : undefined),
    layer,
  );
  const got = key === 'token' || value === undefined ? '' : ` (got ${JSON.stringify(value)})`;
  const last = path.at(-1)!;
  const message = issue.message.includes(last)
    ? issue.message.replace(last, name)
    : `${name}: ${issue.message}`;
  return `${message}${got}`;
}
