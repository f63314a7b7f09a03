/**
 * The local pool lists every node with the configured GPUs per node: after a restart with another
 * instance type, the nodes still up from the old one were listed, placed on and capped as nodes of the
 * new type while the ledger paid them as the old. From g4dn.12xlarge to g4dn.xlarge, six 4-GPU nodes
 * carried one GPU of work each, every job was moved onto them and six more nodes (30 GPUs paid for 12
 * used), and the ceiling counted them as 1 GPU each (found in review). An EC2 instance keeps its type,
 * so the start is refused until the old nodes are gone. So is one with another type of the same GPUs
 * (g4dn.12xlarge to g5.12xlarge): it overwrote the kept type while the old nodes ran on, and boa priced
 * them (nodePricePerHour, the $ figures) and named them as the new type. A mixed pool is not kept: every
 * node of the pool is of one type, as on EKS (a new type replaces the node group there).
 */
import { localPoolSnapshotSchema } from '../cloud/local/local-pool-state.ts';
import { ConfigError } from './config.ts';

/** The setting keeping the instance type and GPUs per node the local pool's nodes were launched with. */
export const LOCAL_POOL_TYPE_KEY = 'localPoolInstance';

export interface LaunchedWith {
  readonly instanceType: string;
  readonly gpusPerNode: number;
}

const plural = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;

/**
 * Refuses a start whose instance type or gpusPerNode differs from the one the pool's nodes still up
 * (released ones included: paid until gone) were launched with. `launchedWith` is undefined for a data
 * dir from before this was kept: nothing to compare.
 */
export function checkLocalPoolGpus(
  launchedWith: LaunchedWith | undefined,
  snapshot: unknown,
  config: { readonly gpusPerNode: number; readonly instanceType: string; readonly releaseSeconds: number },
  now: number,
): void {
  if (launchedWith === undefined) return;
  const sameGpus = launchedWith.gpusPerNode === config.gpusPerNode;
  if (sameGpus && launchedWith.instanceType === config.instanceType) return;
  // An invalid snapshot is refused by the pool itself, naming what is wrong.
  const parsed = localPoolSnapshotSchema.safeParse(snapshot);
  if (!parsed.success) return;
  const releaseMs = config.releaseSeconds * 1000;
  const up = parsed.data.nodes.filter((n) => n.releasedAt === undefined || now < n.releasedAt + releaseMs);
  if (up.length === 0) return;
  const was = plural(launchedWith.gpusPerNode);
  const nodes = `${up.length} node${up.length === 1 ? '' : 's'} up`;
  const wayOut =
    `Start with instanceType ${launchedWith.instanceType} (gpusPerNode ${launchedWith.gpusPerNode}) until ` +
    'they are gone (the pool releases nodes no job runs on: cancel the jobs or let them end), then ' +
    'with the new type; or start a new data dir';
  if (sameGpus)
    throw new ConfigError(
      `the local pool has ${nodes} launched as instanceType ${launchedWith.instanceType} (${was} each), ` +
        `and this start sets instanceType ${config.instanceType}: boa would name and price them ` +
        `(nodePricePerHour, the $ figures) as ${config.instanceType} while they run as ` +
        `${launchedWith.instanceType}. ${wayOut}`,
    );
  throw new ConfigError(
    `the local pool has ${nodes} launched with ` +
      `${was} each (instanceType ${launchedWith.instanceType}), and this start sets ` +
      `${plural(config.gpusPerNode)} a node (instanceType ${config.instanceType}): boa would place and cap ` +
      `them as nodes of ${plural(config.gpusPerNode)} while paying ${was}. ${wayOut}`,
  );
}
