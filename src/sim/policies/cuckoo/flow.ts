/**
 * Min-cost maximum flow by successive shortest paths (Bellman-Ford queue on the residual graph, so
 * negative arc costs are fine as long as there is no negative cycle at the start). Small and exact;
 * cuckoo's execution planning (planning.ts) runs it on group -> (GPU type, order) networks of a few
 * thousand arcs. test/sim/policies/cuckoo/flow.test.ts checks it against enumeration.
 */

export class FlowError extends Error {
  override name = 'FlowError';
}

export class FlowNetwork {
  readonly #to: number[] = [];
  readonly #cap: number[] = [];
  readonly #cost: number[] = [];
  readonly #adj: number[][];

  constructor(readonly nodes: number) {
    if (!(Number.isInteger(nodes) && nodes >= 2)) {
      throw new FlowError(`a flow network needs an integer >= 2 nodes, got ${nodes}`);
    }
    this.#adj = Array.from({ length: nodes }, () => []);
  }

  /** Adds an arc and returns its id (for flowOn). */
  addArc(from: number, to: number, capacity: number, cost: number): number {
    for (const v of [from, to]) {
      if (!(Number.isInteger(v) && v >= 0 && v < this.nodes)) {
        throw new FlowError(`arc ends must be nodes 0..${this.nodes - 1}, got ${v}`);
      }
    }
    if (!(Number.isInteger(capacity) && capacity >= 0)) {
      throw new FlowError(`arc capacities must be integers >= 0, got ${capacity}`);
    }
    if (!Number.isFinite(cost)) throw new FlowError(`arc costs must be finite, got ${cost}`);
    const id = this.#to.length;
    this.#to.push(to, from);
    this.#cap.push(capacity, 0);
    this.#cost.push(cost, -cost);
    (this.#adj[from] as number[]).push(id);
    (this.#adj[to] as number[]).push(id + 1);
    return id;
  }

  /** Flow on an arc after `minCostMaxFlow` (its reverse arc's residual capacity). */
  flowOn(arc: number): number {
    return this.#cap[arc + 1] as number;
  }

  /** Sends the most flow from source to sink at the least cost; returns both. */
  minCostMaxFlow(source: number, sink: number): { flow: number; cost: number } {
    let flow = 0;
    let cost = 0;
    const n = this.nodes;
    const dist = new Float64Array(n);
    const via = new Int32Array(n);
    const queued = new Uint8Array(n);
    for (;;) {
      dist.fill(Number.POSITIVE_INFINITY);
      via.fill(-1);
      dist[source] = 0;
      const queue = [source];
      queued[source] = 1;
      for (let head = 0; head < queue.length; head++) {
        if (head > n * this.#to.length + n) {
          throw new FlowError('a negative-cost cycle in the residual network (costs must not form one)');
        }
        const u = queue[head] as number;
        queued[u] = 0;
        for (const a of this.#adj[u] as number[]) {
          if ((this.#cap[a] as number) <= 0) continue;
          const v = this.#to[a] as number;
          const d = (dist[u] as number) + (this.#cost[a] as number);
          // A relative margin: costs of 1e4-1e5 s carry rounding errors that could otherwise look like
          // a negative cycle and relax forever.
          if (d < (dist[v] as number) - 1e-9 * Math.max(1, Math.abs(d))) {
            dist[v] = d;
            via[v] = a;
            if (!queued[v]) {
              queued[v] = 1;
              queue.push(v);
            }
          }
        }
      }
      if (via[sink] === -1) return { flow, cost };
      let push = Number.POSITIVE_INFINITY;
      for (let v = sink; v !== source; v = this.#to[(via[v] as number) ^ 1] as number) {
        push = Math.min(push, this.#cap[via[v] as number] as number);
      }
      for (let v = sink; v !== source; v = this.#to[(via[v] as number) ^ 1] as number) {
        const a = via[v] as number;
        this.#cap[a] = (this.#cap[a] as number) - push;
        this.#cap[a ^ 1] = (this.#cap[a ^ 1] as number) + push;
      }
      flow += push;
      cost += push * (dist[sink] as number);
    }
  }
}
