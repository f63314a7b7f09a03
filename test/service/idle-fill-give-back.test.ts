/**
 * When GPUs the idle fill lent are given back (idle-fill-pass.ts): only where that places more of the
 * plan's widths, and never from a keep-only node, whose GPUs no other job may take.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { type ClassProfile, parseProfileFile } from '../../src/core/profile.ts';
import { DEFAULT_PROFILES } from '../../src/service/boot.ts';

const classes = parseProfileFile(JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8')))
  .classes as ClassProfile[];
vi.mock('../../src/service/plan-inputs.ts', () => ({ estimatedClasses: () => classes }));

import { placeWithIdleFill } from '../../src/service/idle-fill-pass.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { deepspeech2Job } from './idle-fill-fixture.ts';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import type { BoaService } from '../../src/service/service.ts';

const NOW = 100_000_000;
/** Far ahead: the job counts as restarting, so the fill never widens it (only kept widths matter). */
const RESTARTING = 1e15;
const BOUNDS = { gpusPerNode: 4, minNodes: 0, maxNodes: 8 };
const service = {
  deps: { config: { idleFill: true, drainAfterHours: 0, quietFillSavedRestarts: 20 } },
  state: {},
} as unknown as BoaService;

const job = (id: number, allocation: string[], idleFillGpus = 0, generationSince = RESTARTING): ServiceJob =>
  deepspeech2Job(id, allocation, {
    generation: 0,
    generationSince,
    idleFillGpus,
    state: allocation.length > 0 ? 'running' : 'waiting',
  });

/** Widths by job id, from 1. */
const widthsById =
  (...widths: number[]) =>
  (j: ServiceJob): number =>
    widths[j.id - 1] as number;

const ready = (id: string, keepOnly = false, gpus = 4) => ({
  id,
  launchedAt: 0,
  gpus,
  ready: !keepOnly,
  keepOnly,
});

describe('giving back GPUs the idle fill lent', () => {
  it('keeps them while the short job could not use them: a growing job gets its whole width or none', () => {
    // A runs at 1 with 3 lent on i-1; B grows 4 -> 12 on 12 GPUs in all: it cannot grow either way.
    const a = job(1, ['i-1', 'i-1', 'i-1', 'i-1'], 3, 0);
    const b = job(2, ['i-2', 'i-2', 'i-2', 'i-2']);
    const c = job(3, ['i-3', 'i-3']);
    const widthOf = widthsById(1, 12, 2);
    const placement = new IncrementalPlacement();
    const nodes = [ready('i-1'), ready('i-2'), ready('i-3')];
    for (let tick = 0; tick < 10; tick++) {
      const placed = placeWithIdleFill(
        service,
        placement,
        [a, b, c],
        { widthOf, bounds: BOUNDS },
        nodes,
        NOW,
      );
      // Before, A went back to its plan's 1 GPU (a restart) every tick and B gained nothing.
      expect(placed.changed.has(a.id)).toBe(false);
      expect(placed.changed.has(b.id)).toBe(false);
    }
  });

  it('gives them back where a job would otherwise wait', () => {
    const a = job(1, ['i-1', 'i-1', 'i-1', 'i-1'], 3, 0);
    const w = job(2, []);
    const widthOf = widthsById(1, 3);
    const placed = placeWithIdleFill(
      service,
      new IncrementalPlacement(),
      [a, w],
      { widthOf, bounds: BOUNDS },
      [ready('i-1')],
      NOW,
    );
    expect(placed.changed.get(a.id)).toEqual(['i-1']);
    expect(placed.changed.get(w.id)).toEqual(['i-1', 'i-1', 'i-1']);
  });

  it('keeps them on a keep-only node, which no other job may use', () => {
    // i-1 is in its not-ready grace: A keeps its place there; the new job W gets what i-2 has free.
    const a = job(1, ['i-1', 'i-1', 'i-1', 'i-1'], 3, 0);
    const b = job(2, ['i-2', 'i-2']);
    const w = job(3, []);
    const widthOf = widthsById(1, 2, 4);
    const placement = new IncrementalPlacement();
    placeWithIdleFill(
      service,
      placement,
      [a, b],
      { widthOf, bounds: BOUNDS },
      [ready('i-1'), ready('i-2')],
      NOW,
    );
    const placed = placeWithIdleFill(
      service,
      placement,
      [a, b, w],
      { widthOf, bounds: BOUNDS },
      [ready('i-1', true), ready('i-2')],
      NOW + 60_000,
    );
    // Before, A was moved onto i-2 (a restart) and W got 1 GPU, i-1's 4 left to no one.
    expect(placed.changed.has(a.id)).toBe(false);
    expect(placed.changed.get(w.id)).toEqual(['i-2', 'i-2']);
  });

  it('leaves the placement as its first pass had it when giving back places no more', () => {
    // A runs at 3 with 1 lent on n0, which then offers 3 GPUs (another pod took one): the first pass
    // keeps A where its nodes are listed; B waits either way. Placing again moved A (a restart).
    const a = job(1, ['n0', 'n0', 'n0', 'n0'], 1, 0);
    const b = job(2, []);
    const placement = new IncrementalPlacement();
    placeWithIdleFill(
      service,
      placement,
      [a],
      { widthOf: widthsById(3), bounds: BOUNDS },
      [ready('n0')],
      NOW,
    );
    const placed = placeWithIdleFill(
      service,
      placement,
      [a, b],
      { widthOf: widthsById(3, 2), bounds: BOUNDS },
      [ready('n0', false, 3)],
      NOW + 60_000,
    );
    expect(placed.changed.has(a.id)).toBe(false);
    expect(placement.slotsOf(a.id)).toHaveLength(4);
  });
});
