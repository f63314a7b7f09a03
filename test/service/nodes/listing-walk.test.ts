/**
 * Readiness and removals take in a listing of the same node ids as the last one by a walk, writing
 * only what changed (src/service/nodes/readiness.ts, removals.ts): the same readiness times, graces,
 * overdue nodes, terminated and excluded nodes as the straightforward pass over every node with a set
 * of the listing's ids, over random listings (readiness flipped, nodes gone, added, reordered,
 * duplicated, the same array again), grace stamps, removals carried out, and restarts.
 */
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { NodeReadiness } from '../../../src/service/nodes/readiness.ts';
import { RemovalWalk } from '../../../src/service/nodes/removals.ts';
import type { PoolNode } from '../../../src/service/ports.ts';
import type { NodeRemovalRow, NodeRemovals } from '../../../src/store/node-removals.ts';

const IDS = Array.from({ length: 10 }, (_, i) => `i-${i}`);

/** NodeReadiness as it was: every ready node stamped at every note, every key checked. */
class StraightReadiness {
  readonly readyAt = new Map<string, number>();
  constructor(private readonly graceMs: number) {}
  note(nodes: readonly PoolNode[], now: number): void {
    const listed = new Set(nodes.map((n) => n.id));
    for (const node of nodes) if (node.ready) this.readyAt.set(node.id, now);
    for (const id of this.readyAt.keys()) if (!listed.has(id)) this.readyAt.delete(id);
  }
  inGrace(node: PoolNode, now: number, holdsJobs: () => boolean): boolean {
    const unhealthy = node.waitingFor === 'not-ready' || node.waitingFor === 'no-gpus';
    if (!unhealthy || node.cordoned || node.leaving || !(this.graceMs > 0)) return false;
    if (!this.readyAt.has(node.id) && holdsJobs()) this.readyAt.set(node.id, now);
    const readyAt = this.readyAt.get(node.id);
    return readyAt !== undefined && now - readyAt < this.graceMs;
  }
  overdue(node: PoolNode, now: number, provisionMs: number): boolean {
    const since = Math.max(node.launchedAt, this.readyAt.get(node.id) ?? Number.NEGATIVE_INFINITY);
    return now - since >= provisionMs;
  }
}

/** RemovalWalk's listing as it was: a set of every listing's ids, every node checked against the last. */
class StraightRemovals {
  readonly open = new Set<string>();
  readonly terminated = new Set<string>();
  noted: readonly PoolNode[] | undefined;
  listed = new Set<string>();
  constructor(readonly store: FakeRemovals) {
    for (const row of store.open()) this.open.add(row.nodeId);
  }
  note(nodes: readonly PoolNode[]): void {
    if (nodes === this.noted) return;
    this.noted = nodes;
    const listed = new Set(nodes.map((n) => n.id));
    const firstSeen = nodes.filter((n) => !this.listed.has(n.id)).map((n) => n.id);
    for (const id of this.terminated) if (!listed.has(id)) this.terminated.delete(id);
    if (firstSeen.length > 0)
      for (const row of this.store.terminatedAmong(firstSeen)) this.terminated.add(row.nodeId);
    this.listed = listed;
  }
  includes(id: string): boolean {
    return this.open.has(id) || this.terminated.has(id);
  }
  choose(node: PoolNode, now: number): void {
    if (this.includes(node.id)) return;
    this.store.insert({ nodeId: node.id, nodeName: null, reason: 'scale-in', at: now });
    this.open.add(node.id);
  }
  /**
   * Every open removal finished (nothing busy, every terminate sent), as carryOn does then; one whose
   * node the listing lacks, nothing sent to it yet, closed as never terminated.
   */
  carryOn(now: number, seen: readonly PoolNode[]): void {
    for (const row of this.store.open()) {
      this.open.delete(row.nodeId);
      if (!seen.some((n) => n.id === row.nodeId)) {
        this.store.advance(row.id, 'cancelled', now);
        continue;
      }
      this.store.advance(row.id, 'terminated', now);
      this.terminated.add(row.nodeId);
    }
  }
}

/** The store's removals in memory; the queries each walk made, to compare. */
class FakeRemovals {
  readonly rows: NodeRemovalRow[] = [];
  readonly queries: string[][] = [];
  open(): NodeRemovalRow[] {
    return this.rows
      .filter((r) => r.state !== 'terminated' && r.state !== 'cancelled')
      .map((r) => ({ ...r }));
  }
  insert(row: { nodeId: string; nodeName: string | null; reason: 'scale-in'; at: number }): NodeRemovalRow {
    const stored = {
      id: this.rows.length + 1,
      nodeId: row.nodeId,
      nodeName: row.nodeName,
      reason: row.reason,
      state: 'chosen',
      chosenAt: row.at,
      updatedAt: row.at,
      terminatedAt: null,
      outcome: null,
    } as unknown as NodeRemovalRow;
    this.rows.push(stored);
    return { ...stored };
  }
  advance(id: number, state: NodeRemovalRow['state'], at: number): void {
    const row = this.rows.find((r) => r.id === id)!;
    row.state = state;
    row.updatedAt = at;
  }
  terminatedAmong(ids: readonly string[]) {
    this.queries.push([...ids]);
    return this.rows.filter((r) => ids.includes(r.nodeId) && r.state === 'terminated');
  }
}

const node = (id: string, ready: boolean, launchedAt: number, waitingFor: number): PoolNode => ({
  id,
  launchedAt,
  gpus: 4,
  ready,
  ...(ready ? {} : { waitingFor: ['not-ready', 'no-gpus', 'booting'][waitingFor % 3] as string }),
});

const op = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('flip' as const), at: fc.array(fc.nat(20), { maxLength: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('same' as const), copy: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat(20) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      id: fc.nat(IDS.length - 1),
      at: fc.nat(20),
      ready: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('swap' as const), a: fc.nat(20), b: fc.nat(20) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('grace' as const),
      id: fc.nat(IDS.length - 1),
      waitingFor: fc.nat(2),
      holds: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('choose' as const), at: fc.nat(20) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('carry' as const), back: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'restart' as const }) },
);

describe('node listings walked as the last one', () => {
  it('readiness and removals as the straightforward pass over every node, on random listings and ticks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(op, fc.integer({ min: 0, max: 40 })), { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 1, max: 200 }),
        async (ops, graceMs) => {
          let now = 1_000;
          const launchedAt = (id: string) => 800 + IDS.indexOf(id) * 20;
          const readiness = new NodeReadiness(graceMs);
          const straight = new StraightReadiness(graceMs);
          const store = new FakeRemovals();
          const straightStore = new FakeRemovals();
          const walk = () =>
            new RemovalWalk({
              pool: {
                cordon: async () => {},
                uncordon: async () => {},
                terminate: async (ids) => ({ terminated: [...ids], alreadyGone: [] }),
              },
              removals: store as unknown as NodeRemovals,
              clock: { now: () => now },
              logger: pino({ level: 'silent' }),
            });
          let removals = walk();
          let straightRemovals = new StraightRemovals(straightStore);
          let listing: PoolNode[] = IDS.slice(0, 5).map((id, i) => node(id, i % 2 === 0, launchedAt(id), i));
          const listings: PoolNode[][] = [listing];
          const noteBoth = () => {
            readiness.note(listing, now);
            straight.note(listing, now);
            removals.note(listing);
            straightRemovals.note(listing);
          };
          for (const [o, ms] of ops) {
            now += ms;
            const at = (i: number) => (listing.length === 0 ? 0 : i % listing.length);
            let next: PoolNode[] | undefined;
            if (o.kind === 'flip') {
              next = [...listing];
              for (const i of o.at) {
                const n = next[at(i)];
                if (n) next[at(i)] = node(n.id, !n.ready, n.launchedAt, i);
              }
            } else if (o.kind === 'same') next = o.copy ? [...listing] : listing;
            else if (o.kind === 'remove') next = listing.filter((_, i) => i !== at(o.at));
            else if (o.kind === 'add') {
              // A new id, or one listed already (a duplicate).
              const id = IDS[o.id] as string;
              next = [...listing];
              next.splice(at(o.at), 0, node(id, o.ready, launchedAt(id), o.at));
            } else if (o.kind === 'swap') {
              next = [...listing];
              const [a, b] = [next[at(o.a)], next[at(o.b)]];
              if (a && b) [next[at(o.a)], next[at(o.b)]] = [b, a];
            } else if (o.kind === 'grace') {
              // A node of the next listing (or of none) seen not ready before the note, as usable() does.
              const n = node(IDS[o.id] as string, false, launchedAt(IDS[o.id] as string), o.waitingFor);
              expect(readiness.inGrace(n, now, () => o.holds)).toBe(straight.inGrace(n, now, () => o.holds));
            } else if (o.kind === 'choose') {
              const n = listing[at(o.at)];
              if (n) {
                removals.choose(n, 'scale-in', now);
                straightRemovals.choose(n, now);
              }
            } else if (o.kind === 'carry') {
              // The background pass: a listing noted now or a few ticks ago, every removal carried out.
              const seen = listings[Math.max(0, listings.length - 1 - o.back)] as PoolNode[];
              removals.note(seen);
              straightRemovals.note(seen);
              await removals.carryOn(
                seen,
                () => 0,
                () => {},
              );
              straightRemovals.carryOn(now, seen);
            } else {
              removals = walk();
              straightRemovals = new StraightRemovals(straightStore);
            }
            if (next) {
              listing = next;
              listings.push(next);
              noteBoth();
            }
            for (const id of IDS) {
              expect(readiness.lastReady(id)).toBe(straight.readyAt.get(id));
              const n = node(id, false, launchedAt(id), 0);
              for (const provisionMs of [1, 50, 300])
                expect(readiness.overdue(n, now, provisionMs)).toBe(straight.overdue(n, now, provisionMs));
              expect(removals.includes(id)).toBe(straightRemovals.includes(id));
              expect(removals.terminated(id)).toBe(straightRemovals.terminated.has(id));
            }
            expect(store.queries).toEqual(straightStore.queries);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
