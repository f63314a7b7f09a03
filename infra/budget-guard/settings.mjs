// The budget guard's settings, from the Lambda's environment as the CDK app sets it (infra/budget-guard.ts).

/** Reads the guard's settings from the environment (numbers arrive as strings). */
export function readSettings(env) {
  const settings = {
    clusterName: env.CLUSTER_NAME,
    nodegroupName: env.NODEGROUP_NAME,
    gpusPerNode: Number(env.GPUS_PER_NODE),
    guardMinutes: Number(env.GUARD_MINUTES ?? 15),
    budget: env.BUDGET ? Number(env.BUDGET) : undefined,
    // GPUs of the instance types boa knows (src/core/instance-types.ts, from the CDK app): each group's
    // instances, the guarded one's and a replaced one's, are counted at their own type's.
    instanceGpus: readInstanceGpus(env.INSTANCE_TYPE_GPUS),
  };
  if (!settings.clusterName || !settings.nodegroupName)
    throw new Error('CLUSTER_NAME and NODEGROUP_NAME are required');
  if (!Number.isInteger(settings.gpusPerNode) || settings.gpusPerNode < 1)
    throw new Error(`GPUS_PER_NODE must be a positive integer, got ${env.GPUS_PER_NODE}`);
  if (!(settings.guardMinutes > 0))
    throw new Error(`GUARD_MINUTES must be positive, got ${env.GUARD_MINUTES}`);
  if (settings.budget !== undefined && !(settings.budget > 0))
    throw new Error(`BUDGET must be positive, got ${env.BUDGET}`);
  return settings;
}

/**
 * INSTANCE_TYPE_GPUS: {"<instance type>": <GPUs>, ...}. Checked, since a count that is no positive whole
 * number would be summed as such (a string concatenated) into the GPUs a replaced group holds.
 */
function readInstanceGpus(raw) {
  if (!raw) return {};
  const refuse = () =>
    new Error(
      `INSTANCE_TYPE_GPUS must be a JSON object of instance types to whole GPU counts from 1, such as ` +
        `{"g4dn.xlarge":1}, got ${raw}`,
    );
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw refuse();
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw refuse();
  if (!Object.values(parsed).every((gpus) => Number.isInteger(gpus) && gpus >= 1)) throw refuse();
  return parsed;
}
