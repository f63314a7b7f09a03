/**
 * GPU types the simulator can put in a cluster: each is an AWS instance family of 4-GPU nodes, so every
 * node keeps the measured placements' 4-GPU shape. t4 (g4dn.12xlarge) is where the ground truth was
 * measured and the default; the others run the same jobs scaled per class and stage (truth/hardware.ts).
 * Datasheet numbers and their sources: data/README.md.
 */
export const GPU_TYPES = ['t4', 'v100', 'a10g'] as const;
export type GpuType = (typeof GPU_TYPES)[number];
export const DEFAULT_GPU_TYPE: GpuType = 't4';
/** The most GPUs a fixed cluster may have: as many as the largest job a trace may ask for (every node is
 * an object from the start, and a billion ran out of memory). */
export const MAX_CLUSTER_GPUS = 100_000;

export interface GpuTypeSpec {
  readonly type: GpuType;
  /** The EC2 instance family and size a node of this type is. */
  readonly family: string;
  readonly instance: string;
  readonly gpusPerNode: number;
  /** Dense FP16 tensor-core peak per GPU (TFLOPS), NVIDIA datasheets. */
  readonly tensorTflops: number;
  /** Memory bandwidth per GPU (GB/s), NVIDIA datasheets. */
  readonly memoryGBps: number;
  /** The instance's network bandwidth (Gbit/s), AWS instance pages: what inter-node sync goes over. */
  readonly networkGbps: number;
}

export const GPU_TYPE_SPECS: Readonly<Record<GpuType, GpuTypeSpec>> = {
  t4: {
    type: 't4',
    family: 'g4dn',
    instance: 'g4dn.12xlarge',
    gpusPerNode: 4,
    tensorTflops: 65,
    memoryGBps: 320,
    networkGbps: 50,
  },
  v100: {
    type: 'v100',
    family: 'p3',
    instance: 'p3.8xlarge',
    gpusPerNode: 4,
    tensorTflops: 125,
    memoryGBps: 900,
    networkGbps: 10,
  },
  a10g: {
    type: 'a10g',
    family: 'g5',
    instance: 'g5.12xlarge',
    gpusPerNode: 4,
    tensorTflops: 125,
    memoryGBps: 600,
    networkGbps: 40,
  },
};

/** One node pool of a cluster: `nodes` nodes of one GPU type. */
export interface NodePoolSpec {
  readonly type: GpuType;
  readonly nodes: number;
}

/** A cluster as node pools, in the order given (node ids are assigned pool by pool). */
export type ClusterSpec = readonly NodePoolSpec[];

export class ClusterSpecError extends Error {
  override name = 'ClusterSpecError';
}

const ALLOWED = GPU_TYPES.map((t) => `${GPU_TYPE_SPECS[t].family} (or ${t})`).join(', ');

/** A type by its name or its instance family (`p3` or `v100`). */
export function gpuTypeOf(name: string): GpuType {
  const key = name.trim().toLowerCase();
  const found = GPU_TYPES.find((t) => t === key || GPU_TYPE_SPECS[t].family === key);
  if (found === undefined) throw new ClusterSpecError(`unknown GPU type "${name}"; allowed: ${ALLOWED}`);
  return found;
}

/**
 * `g4dn:8,p3:4` (instance family or GPU type : node count), or the same as JSON:
 * `[{"type":"g4dn","nodes":8},{"type":"p3","nodes":4}]`. A type may be given once.
 */
export function parseClusterSpec(text: string): ClusterSpec {
  const trimmed = text.trim();
  const entries: Array<{ type: unknown; nodes: unknown }> = trimmed.startsWith('[')
    ? parseJson(trimmed)
    : trimmed
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .map((part) => {
          const match = /^([A-Za-z0-9]+):([^:]+)$/.exec(part);
          if (!match)
            throw new ClusterSpecError(
              `"${part}" is not type:nodes (e.g. g4dn:8); allowed types: ${ALLOWED}`,
            );
          return { type: match[1], nodes: Number(match[2]) };
        });
  if (entries.length === 0)
    throw new ClusterSpecError(`the cluster spec is empty; give type:nodes pairs (e.g. g4dn:8,p3:4)`);
  const seen = new Set<GpuType>();
  const pools = entries.map(({ type, nodes }) => {
    if (typeof type !== 'string')
      throw new ClusterSpecError(`a node pool needs a "type"; allowed: ${ALLOWED}`);
    const gpuType = gpuTypeOf(type);
    if (seen.has(gpuType)) throw new ClusterSpecError(`GPU type ${gpuType} is given twice`);
    seen.add(gpuType);
    if (typeof nodes !== 'number' || !Number.isInteger(nodes) || nodes < 1) {
      throw new ClusterSpecError(`${type}: the node count must be a positive integer, got ${String(nodes)}`);
    }
    return { type: gpuType, nodes };
  });
  const gpus = pools.reduce((sum, p) => sum + p.nodes * GPU_TYPE_SPECS[p.type].gpusPerNode, 0);
  if (gpus > MAX_CLUSTER_GPUS)
    throw new ClusterSpecError(`the cluster has ${gpus} GPUs; at most ${MAX_CLUSTER_GPUS} are allowed`);
  return pools;
}

function parseJson(text: string): Array<{ type: unknown; nodes: unknown }> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ClusterSpecError(`the cluster spec is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'object' || v === null)) {
    throw new ClusterSpecError('a JSON cluster spec is an array of {"type": ..., "nodes": ...}');
  }
  return value as Array<{ type: unknown; nodes: unknown }>;
}

/** True when the spec has more than one GPU type (homogeneous t4 clusters run exactly as before). */
export function isHeterogeneous(spec: ClusterSpec | undefined): boolean {
  return spec !== undefined && new Set(spec.map((p) => p.type)).size > 1;
}

export function formatClusterSpec(spec: ClusterSpec): string {
  return spec.map((p) => `${GPU_TYPE_SPECS[p.type].family}:${p.nodes}`).join(',');
}
