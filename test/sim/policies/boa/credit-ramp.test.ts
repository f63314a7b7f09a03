/**
 * The credit for a tight budget phased in (src/core/credit.ts), on the trace where its gate flipped:
 * workload-1 (all six classes) at 90 GPU-hours/hour, where the online load estimate hovers around 90% of
 * the budget late in the arrivals, after hours that left much of the budget unspent. With a step at the
 * gate, consecutive plans alternated between the cheapest widths and twice the budget: 12 -> 129 -> 4
 * nodes within 8 minutes (516 GPUs at a budget of 90), every job restarting each time.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import { parseTrace } from '../../../../src/core/trace.ts';
import { simulate, truthProvider } from '../../../../src/sim/run.ts';
import { POLLUX, REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));
const trace = parseTrace(readFileSync(resolve(POLLUX, 'workloads/workload-1.csv'), 'utf8'));

describe('credit at the gate', () => {
  it('does not flip the cluster between the cheapest plan and twice the budget', () => {
    const budget = 90;
    const nodes: number[] = [];
    const { result } = simulate({
      trace,
      policy: 'boa',
      options: { budget },
      profiles,
      truthOf: truthProvider(POLLUX),
      observer: (tick) => nodes.push(tick.cluster.nodes.length),
    });
    expect(result.completed).toBe(result.jobs);
    // The ceiling lets the window's unspent budget out in bursts; the plan alone stays near it.
    expect(result.peakNodes * 4).toBeLessThanOrEqual(2.5 * budget);
    // No tick-to-tick swing of more than the budget's worth of nodes.
    let swing = 0;
    for (let i = 1; i < nodes.length; i++) swing = Math.max(swing, Math.abs(nodes[i]! - nodes[i - 1]!));
    expect(swing * 4).toBeLessThanOrEqual(budget);
  });
});
