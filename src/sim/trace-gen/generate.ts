/**
 * Synthetic workload traces in the Pollux workload format: N jobs whose arrivals span H hours with
 * bursty inter-arrival times of a chosen SCV, applications in a chosen mix, and the requests real users
 * made for each application.
 */
import { MAX_ARRIVAL_SECONDS, type TraceJob } from '../../core/trace.ts';
import { interarrivalSampler } from './interarrival.ts';
import { seededUniform, type Uniform } from './random.ts';
import { POLLUX_REQUESTS, type RequestTable } from './requests.ts';

export interface TraceSpec {
  readonly jobs: number;
  /** The arrivals span exactly this long: first at 0, last at hours * 3600 s. */
  readonly hours: number;
  /** Relative weights per application (percentages or any positive numbers; normalised). */
  readonly mix: Readonly<Record<string, number>>;
  /** Squared coefficient of variation of the inter-arrival times. */
  readonly scv: number;
  readonly seed: number;
  readonly requests?: RequestTable;
}

export class TraceSpecError extends Error {
  override name = 'TraceSpecError';
}

/**
 * Gaps are drawn i.i.d. from the SCV fit and the arrival times scaled so the span is exactly H hours
 * (scaling keeps the SCV). Application counts are exact (largest remainder of N x share), then
 * shuffled; each job draws its request from its application's table.
 */
export function generateTrace(spec: TraceSpec): TraceJob[] {
  const requests = spec.requests ?? POLLUX_REQUESTS;
  checkSpec(spec, requests);
  const uniform = seededUniform(spec.seed);
  const gap = interarrivalSampler(1, spec.scv, uniform);
  const times = [0];
  for (let i = 1; i < spec.jobs; i++) times.push((times[i - 1] as number) + gap());
  const scale = (spec.hours * 3600) / (times[times.length - 1] as number);
  const apps = shuffle(appCounts(spec.jobs, spec.mix), uniform);
  return apps.map((app, i) => {
    const [numReplicas, batchSize] = drawRequest(requests[app] ?? [], uniform);
    return {
      name: `${app}-${i}`,
      time: Math.round((times[i] as number) * scale * 1000) / 1000,
      application: app,
      numReplicas,
      batchSize,
    };
  });
}

/** The trace as CSV with the Pollux workload header. */
export function formatTraceCsv(jobs: readonly TraceJob[]): string {
  const lines = jobs.map((j) => `${j.name},${j.time},${j.application},${j.numReplicas},${j.batchSize}`);
  return `name,time,application,num_replicas,batch_size\n${lines.join('\n')}\n`;
}

/** Exact counts per application: floor of N x share, the remainder to the largest fractions. */
export function appCounts(jobs: number, mix: Readonly<Record<string, number>>): string[] {
  const total = Object.values(mix).reduce((a, b) => a + b, 0);
  const entries = Object.entries(mix).map(([app, weight]) => {
    const exact = (jobs * weight) / total;
    return { app, count: Math.floor(exact), fraction: exact - Math.floor(exact) };
  });
  let left = jobs - entries.reduce((sum, e) => sum + e.count, 0);
  for (const e of [...entries].sort((a, b) => b.fraction - a.fraction || a.app.localeCompare(b.app))) {
    if (left-- <= 0) break;
    e.count++;
  }
  return entries.flatMap((e) => Array<string>(e.count).fill(e.app));
}

function shuffle<T>(items: T[], uniform: Uniform): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.min(i, Math.floor(uniform.next() * (i + 1)));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

function drawRequest(rows: RequestTable[string], uniform: Uniform): [number, number] {
  const total = rows.reduce((sum, [, , count]) => sum + count, 0);
  let u = uniform.next() * total;
  for (const [replicas, batch, count] of rows) {
    u -= count;
    if (u <= 0) return [replicas, batch];
  }
  const last = rows[rows.length - 1] as RequestTable[string][number];
  return [last[0], last[1]];
}

/**
 * The most jobs a trace is generated with: a million took 7 s and 0.7 GB; 20 million ran out of memory
 * after 90 s and 5 GB, and 1e9 ended node with a fatal error (not an exception: no message of ours).
 */
export const MAX_TRACE_JOBS = 1_000_000;

function checkSpec(spec: TraceSpec, requests: RequestTable): void {
  if (!Number.isInteger(spec.jobs) || spec.jobs < 2 || spec.jobs > MAX_TRACE_JOBS) {
    throw new TraceSpecError(
      `jobs must be an integer from 2 (arrivals need a span) to ${MAX_TRACE_JOBS}, got ${spec.jobs}`,
    );
  }
  // Its last arrival at hours * 3600 s, which the trace reader would refuse past MAX_ARRIVAL_SECONDS.
  if (!(Number.isFinite(spec.hours) && spec.hours > 0 && spec.hours * 3600 <= MAX_ARRIVAL_SECONDS)) {
    throw new TraceSpecError(
      `hours must be a positive number up to ${Math.floor(MAX_ARRIVAL_SECONDS / 3600)} (about 31 years), got ${spec.hours}`,
    );
  }
  if (!(Number.isFinite(spec.scv) && spec.scv >= 0)) {
    throw new TraceSpecError(`scv must be a number >= 0 (1 = Poisson arrivals), got ${spec.scv}`);
  }
  const apps = Object.entries(spec.mix);
  if (apps.length === 0) throw new TraceSpecError('the mix is empty: give app:percent pairs');
  for (const [app, weight] of apps) {
    if (!(app in requests)) {
      throw new TraceSpecError(
        `unknown application "${app}" in the mix; known: ${Object.keys(requests).join(', ')}`,
      );
    }
    if (!(Number.isFinite(weight) && weight > 0)) {
      throw new TraceSpecError(`the mix share of ${app} must be a positive number, got ${weight}`);
    }
  }
}
