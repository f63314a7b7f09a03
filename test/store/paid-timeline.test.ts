/**
 * The paid sums read off the timeline of GPUs paid (src/store/paid-timeline.ts, behind PaidWindow)
 * equal the straightforward sum over every node, to the unit: nodes opened, closed, listed again with
 * their first launch, launched after the tick that closes them (a clock ahead), queries forgetting
 * what ended before their earliest start, and steps folded into the base level (sooner than the
 * service's 1,024 here, so every run folds).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PaidSpan, PaidWindow } from '../../src/store/paid-window.ts';

/** The SQL's sum, node by node: gpus x the part of [launch, gone or to] within [from, to]. */
function straightforward(spans: Iterable<PaidSpan>, from: number, to: number): number {
  let sum = 0;
  for (const s of spans) {
    const end = s.goneAt ?? to;
    if (end > from) sum += s.gpus * Math.max(0, Math.min(end, to) - Math.max(s.launchedAt, from));
  }
  return sum;
}

const op = fc.oneof(
  // A node listed: launched up to 300 ms ago, or up to 20 ms ahead of the store's clock.
  fc.record({
    kind: fc.constant('open' as const),
    node: fc.nat(15),
    gpus: fc.integer({ min: 1, max: 8 }),
    ago: fc.integer({ min: -20, max: 300 }),
  }),
  fc.record({ kind: fc.constant('close' as const), node: fc.nat(15) }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 1, max: 40 }) }),
  // The ceiling's look-backs (forgetting before the earliest), or one sum alone (a ledger bucket).
  fc.record({
    kind: fc.constant('query' as const),
    backs: fc.array(fc.nat(200), { minLength: 1, maxLength: 6 }),
    forget: fc.boolean(),
    ahead: fc.integer({ min: -30, max: 30 }),
  }),
);

describe('paid sums off the timeline', () => {
  it('equal the per-node sums over any sequence of listings and queries', () => {
    fc.assert(
      fc.property(
        fc.array(op, { minLength: 1, maxLength: 150, size: 'max' }),
        fc.integer({ min: 1, max: 6 }),
        (ops, foldAfter) => {
          let now = 1000;
          // The store's rows: a node listed again keeps its first launch and GPUs.
          const rows = new Map<string, PaidSpan>();
          const window = new PaidWindow([], now, foldAfter);
          let heldFrom = now;
          for (const o of ops) {
            if (o.kind === 'advance') now += o.ms;
            else if (o.kind === 'open') {
              const id = `n${o.node}`;
              const row = rows.get(id);
              if (row?.goneAt === null) continue;
              const span = row
                ? { ...row, goneAt: null }
                : { id, gpus: o.gpus, launchedAt: now - o.ago, goneAt: null };
              rows.set(id, span);
              window.opened({ ...span });
            } else if (o.kind === 'close') {
              const id = `n${o.node}`;
              const row = rows.get(id);
              if (!row || row.goneAt !== null) continue;
              row.goneAt = now;
              window.closedAt(id, now);
            } else {
              const froms = o.backs.map((b) => Math.max(heldFrom, now - b));
              const to = now + o.ahead;
              if (o.forget) {
                expect(window.paidGpuMsFrom(froms, to)).toEqual(
                  froms.map((f) => straightforward(rows.values(), f, to)),
                );
                heldFrom = Math.max(heldFrom, Math.min(...froms));
              } else {
                const from = froms[0] as number;
                expect(window.paidGpuMs(from, to)).toBe(straightforward(rows.values(), from, to));
              }
              // Before what is held: the store is asked instead.
              expect(window.paidGpuMs(heldFrom - 1, now)).toBeUndefined();
            }
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('folds the steps before the earliest start without changing a sum', () => {
    const window = new PaidWindow([], 0, 2);
    window.opened({ id: 'a', gpus: 4, launchedAt: 0, goneAt: null });
    for (let t = 10; t <= 100; t += 10) {
      window.opened({ id: `b${t}`, gpus: 1, launchedAt: t - 5, goneAt: null });
      window.closedAt(`b${t}`, t);
    }
    // The steps up to 95 fold into the base level; b100 (launched at 95, gone at 100) stays a step.
    expect(window.paidGpuMsFrom([95, 98], 120)).toEqual([4 * 25 + 5, 4 * 22 + 2]);
    // A node forgotten and then listed again pays from its first launch: from the earliest held on.
    window.opened({ id: 'b10', gpus: 1, launchedAt: 5, goneAt: null });
    expect(window.paidGpuMsFrom([95, 98], 120)).toEqual([4 * 25 + 5 + 25, 4 * 22 + 2 + 22]);
  });
});
