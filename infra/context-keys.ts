/** The context keys the CDK app reads, and the check that refuses any other the operator gives. */

/**
 * Every context key the app reads (readConfig, and `nag` in app.ts). A key outside it is refused: a
 * misspelling such as maxGPUNodes would otherwise be ignored and its default deployed (4 nodes, not 16).
 */
export const CONTEXT_KEYS: readonly string[] = [
  'stackName',
  'clusterName',
  'region',
  'availabilityZones',
  'budget',
  'maxGpuNodes',
  'instanceType',
  'gpusPerNode',
  'nodePricePerHour',
  'gpuNodeDiskGiB',
  'allowedApiCidrs',
  'exposeApi',
  'apiCertificateArn',
  'alarmEmail',
  'adminPrincipalArns',
  'adminPrincipalArn',
  'jobsNamespace',
  'jobsRoleArn',
  'jobsImagePullSecrets',
  'budgetGuard',
  'guardMinutes',
  'backupTag',
  'nag',
];

/**
 * Keys CDK puts into the context itself, never the operator's: feature flags (@aws-cdk/..., also
 * @aws-cdk-containers/...), the CLI's aws:cdk:... keys, cdk.context.json's lookups (availability-zones:...,
 * ami:..., all provider:key), `cdk acknowledge`'s list, and cdk-... keys. Left unchecked so a CDK release
 * that adds one never fails a synth.
 */
function isCdkKey(key: string): boolean {
  return (
    key.startsWith('@') || key.includes(':') || key.startsWith('cdk') || key === 'acknowledged-issue-numbers'
  );
}

/** Levenshtein distance, case ignored (maxGPUNodes is a case slip of maxGpuNodes). */
function distance(a: string, b: string): number {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  let row = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const next = [i];
    for (let j = 1; j <= y.length; j++) {
      next.push(Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1)));
    }
    row = next;
  }
  return row[y.length]!;
}

/** Why a context key is refused (neither boa's nor CDK's own), naming the closest of boa's; else undefined. */
export function unknownContextKey(keys: Iterable<string>): string | undefined {
  for (const key of keys) {
    if (CONTEXT_KEYS.includes(key) || isCdkKey(key)) continue;
    const closest = CONTEXT_KEYS.reduce((best, known) =>
      distance(key, known) < distance(key, best) ? known : best,
    );
    return (
      `unknown context key "${key}" (did you mean "${closest}"?); it would be ignored and its default ` +
      `deployed. Known keys: ${CONTEXT_KEYS.join(', ')}`
    );
  }
  return undefined;
}
