/**
 * The simulated node group and its bill: a node is paid from the moment it is requested until it is
 * gone (release lag after its release), and can take allocations once booted.
 */
import { DEFAULT_GPU_TYPE, type GpuType } from '../gpu-types.ts';
import type { NodeView } from '../policy.ts';

export interface NodeRecord {
  readonly id: number;
  readonly gpus: number;
  readonly gpuType: GpuType;
  readonly requestedAt: number;
  readonly readyAt: number;
  /** When the engine released it; null while present. */
  releasedAt: number | null;
  /** When billing stops (release + lag); null while present. */
  goneAt: number | null;
}

export class SimCluster {
  readonly #nodes: NodeRecord[] = [];
  #present: NodeRecord[] = [];
  #nextId = 0;
  #peak = 0;

  constructor(
    readonly gpusPerNode: number,
    readonly bootSeconds: number,
    readonly releaseLagSeconds: number,
  ) {}

  /** Nodes requested and not released (booting or ready), oldest first. */
  present(): readonly NodeRecord[] {
    return this.#present;
  }

  /** Every node ever requested, for the bill and for checks. */
  all(): readonly NodeRecord[] {
    return this.#nodes;
  }

  peakNodes(): number {
    return this.#peak;
  }

  /** Requests `count` nodes at `now`; `booted` skips the boot delay (a fixed cluster exists from the start). */
  request(count: number, now: number, booted = false, gpuType: GpuType = DEFAULT_GPU_TYPE): void {
    for (let i = 0; i < count; i++) {
      const node: NodeRecord = {
        id: this.#nextId++,
        gpus: this.gpusPerNode,
        gpuType,
        requestedAt: now,
        readyAt: booted ? now : now + this.bootSeconds,
        releasedAt: null,
        goneAt: null,
      };
      this.#nodes.push(node);
      this.#present.push(node);
    }
    this.#peak = Math.max(this.#peak, this.#present.length);
  }

  release(ids: ReadonlySet<number>, now: number): void {
    for (const node of this.#present) {
      if (ids.has(node.id)) {
        node.releasedAt = now;
        node.goneAt = now + this.releaseLagSeconds;
      }
    }
    this.#present = this.#present.filter((node) => !ids.has(node.id));
  }

  views(now: number): NodeView[] {
    return this.#present.map((n) => ({
      id: n.id,
      gpus: n.gpus,
      gpuType: n.gpuType,
      ready: n.readyAt <= now,
      readyAt: n.readyAt,
    }));
  }

  /** GPU-seconds paid within [from, to]: every node from its request until it is gone (or `to`). */
  paidGpuSeconds(from: number, to: number, gpuType?: GpuType): number {
    let sum = 0;
    for (const n of this.#nodes) {
      if (gpuType !== undefined && n.gpuType !== gpuType) continue;
      const end = Math.min(n.goneAt ?? to, to);
      const begin = Math.max(n.requestedAt, from);
      if (end > begin) sum += n.gpus * (end - begin);
    }
    return sum;
  }
}
