/**
 * Where the service's idle fill (src/service/idle-fill.ts) does not widen, on one placement pass: a node
 * offered keep-only (its jobs stay, nothing new goes there), a job on several nodes, a job still within
 * its class's rescale time. The widening itself: idle-fill.test.ts.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PROFILES } from '../../src/service/boot.ts';
import { fillIdle } from '../../src/service/idle-fill.ts';
import type { ServiceJob } from '../../src/service/jobs.ts';
import { deepspeech2Job } from './idle-fill-fixture.ts';
import { IncrementalPlacement } from '../../src/service/placement.ts';
import type { PoolNode } from '../../src/service/ports.ts';
import { type ClassProfile, parseProfileFile } from '../../src/core/profile.ts';

const classes = new Map<string, ClassProfile>(
  parseProfileFile(JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8'))).classes.map((c) => [c.name, c]),
);
const NOW = 10_000_000;
const node = (i: number, extra: Partial<PoolNode> = {}): PoolNode => ({
  id: `i-${i}`,
  launchedAt: 0,
  gpus: 4,
  ready: true,
  ...extra,
});

const job = (id: number, allocation: string[], generationSince = 0): ServiceJob =>
  deepspeech2Job(id, allocation, { generationSince });

function filled(jobs: ServiceJob[], widths: number[], nodes: PoolNode[]) {
  const placement = new IncrementalPlacement();
  const widthOf = (j: ServiceJob) => widths[jobs.indexOf(j)] as number;
  placement.place(jobs, widthOf, nodes, { gpusPerNode: 4, minNodes: 0, maxNodes: 8 });
  return fillIdle(
    placement,
    (id) => jobs.find((j) => j.id === id),
    widthOf,
    () => classes,
    NOW,
  );
}

describe('the idle fill leaves alone', () => {
  it('widens a job running on one ready node (the case the others differ from)', () => {
    const moved = filled([job(1, ['i-1'])], [1], [node(1)]);
    expect(moved.get(1)).toEqual(['i-1', 'i-1', 'i-1', 'i-1']);
  });

  it('a job on a keep-only node', () => {
    expect(filled([job(1, ['i-1'])], [1], [node(1, { keepOnly: true })]).size).toBe(0);
  });

  it('a job on several nodes', () => {
    const moved = filled([job(1, ['i-1', 'i-2'])], [2], [node(1), node(2)]);
    expect(moved.size).toBe(0);
  });

  it('a job within its rescale time of its allocation (restarting)', () => {
    const rescale = (classes.get('deepspeech2') as ClassProfile).rescaleSeconds;
    expect(filled([job(1, ['i-1'], NOW - (rescale * 1000) / 2)], [1], [node(1)]).size).toBe(0);
  });
});
