/**
 * Rate estimator benchmark: the rates a plan is made for (plannedRates, the service's defaults) over N
 * submissions at distinct instants in the last two windows, six classes. Prints one JSON object:
 * `firstReadMs`, the first read with no past estimates kept (a service's first plan after a start, or
 * after a history import), and `nextReadMs`, the median read a minute later with 5 new submissions
 * (a tick's), past estimates kept.
 *   npm run -s bench:rates -- [--submissions N[,N...]] [--reads N]
 */
import { type PastEstimate, plannedRates } from '../src/service/estimators.ts';
import { DEFAULT_RISE } from '../src/service/rate-rise.ts';
import { parseList, runMain, scriptProgram, UsageError } from './lib/inputs.ts';

const HOUR = 3_600_000;
const CLASSES = ['cifar10', 'imagenet', 'ncf', 'deepspeech2', 'yolov3', 'bert'].map((name) => ({
  name,
  priorRatePerHour: 0,
}));

const program = scriptProgram('bench:rates')
  .option('--submissions <list>', 'submissions in the last 47 hours, one run each', '2000,4000,8000')
  .option('--reads <n>', 'timed reads after the first', '20');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1] as number;
}

await runMain(() => {
  const opts = program.parse().opts<{ submissions: string; reads: string }>();
  const reads = Number(opts.reads);
  if (!Number.isInteger(reads) || reads < 1)
    throw new UsageError(`--reads must be a positive integer, got ${opts.reads}`);
  const counts = parseList(opts.submissions, '--submissions').map((s) => {
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1)
      throw new UsageError(`--submissions takes positive integers, got ${s}`);
    return n;
  });
  const now0 = Date.UTC(2026, 10, 1);
  const measure = (n: number) => {
    // Evenly spread, each at its own millisecond, classes in turn: every submission is an instant.
    const submissions = Array.from({ length: n }, (_, i) => ({
      className: CLASSES[i % CLASSES.length]?.name as string,
      submittedAt: now0 - 47 * HOUR + Math.floor((i * 47 * HOUR) / n),
    }));
    const options = (now: number) => ({
      now,
      windowHours: 24,
      priorWeightHours: 2,
      observedSince: now0 - 48 * HOUR,
      holdHalfLifeHours: 48,
      rise: DEFAULT_RISE,
    });
    const memo = new Map<number, PastEstimate>();
    let start = performance.now();
    plannedRates(CLASSES, submissions, options(now0), memo);
    const firstReadMs = performance.now() - start;
    const next: number[] = [];
    let now = now0;
    for (let r = 0; r < reads; r++) {
      now += 60_000;
      for (let k = 0; k < 5; k++)
        submissions.push({ className: 'ncf', submittedAt: now - 50_000 + k * 10_000 });
      start = performance.now();
      plannedRates(CLASSES, submissions, options(now), memo);
      next.push(performance.now() - start);
    }
    return { submissions: n, firstReadMs, nextReadMs: median(next) };
  };
  // One untimed run first: otherwise the first size's first read also pays for compiling the
  // estimator, and reads as slower than larger sizes.
  measure(Math.min(...counts));
  const runs = counts.map(measure);
  process.stdout.write(`${JSON.stringify({ bench: 'rates', runs })}\n`);
});
