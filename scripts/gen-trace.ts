/**
 * Writes a synthetic workload trace (the Pollux workload CSV format) with bursty arrivals.
 *   npm run -s gen-trace -- --jobs N --hours H --mix app:pct,... --scv C2 --seed S [--out FILE]
 */
import { formatTraceCsv, generateTrace, MAX_TRACE_JOBS } from '../src/sim/trace-gen/generate.ts';
import { checkOut, emit, runMain, scriptProgram } from './lib/inputs.ts';
import { asUsage, numberOption, parseMix, seedOption } from './lib/sim-args.ts';

const program = scriptProgram('gen-trace')
  .description('Synthetic workload trace: N jobs over H hours, an application mix, arrivals of a given SCV')
  .requiredOption('--jobs <n>', `number of jobs (2 to ${MAX_TRACE_JOBS})`)
  .requiredOption('--hours <h>', 'span of the arrivals in hours (first at 0, last at H)')
  .requiredOption('--mix <list>', 'app:percent pairs, e.g. cifar10:50.42,bert:21.67 (normalised)')
  .option('--scv <c2>', 'squared coefficient of variation of inter-arrival times (1 = Poisson)', '1')
  .option('--seed <n>', 'random seed', '1')
  .option('--out <file>', 'write here instead of stdout');

await runMain(() => {
  program.parse();
  const opts = program.opts<{
    jobs: string;
    hours: string;
    mix: string;
    scv: string;
    seed: string;
    out?: string;
  }>();
  const spec = {
    jobs: numberOption(opts.jobs, '--jobs', { min: 2, integer: true, below: MAX_TRACE_JOBS + 1 }),
    hours: numberOption(opts.hours, '--hours', { min: 0, exclusiveMin: true }),
    mix: parseMix(opts.mix),
    scv: numberOption(opts.scv, '--scv', { min: 0 }),
    seed: seedOption(opts.seed),
  };
  // Before the generation (seconds for a million jobs), not when its result is written.
  checkOut(opts.out);
  const trace = asUsage(() => generateTrace(spec));
  emit(formatTraceCsv(trace), opts.out);
  // Percentages that are not (cifar10:3,bert:1) are taken as weights: say what they came to (once
  // written: an error stays its one line).
  const total = Object.values(spec.mix).reduce((a, b) => a + b, 0);
  if (Math.abs(total - 100) > 1e-9) {
    const shares = Object.entries(spec.mix).map(([app, w]) => `${app} ${round((100 * w) / total)}%`);
    process.stderr.write(`--mix sums to ${round(total)}, not 100: normalised to ${shares.join(', ')}\n`);
  }
  // Written to a file, it printed nothing: say what and where (to stderr, as the note above).
  if (opts.out) {
    // A loop, not Math.max(...): spreading 150,000 arrivals overflowed the call stack.
    let last = 0;
    for (const job of trace) last = Math.max(last, job.time);
    process.stderr.write(`wrote ${opts.out}: ${trace.length} jobs arriving over ${round(last / 3600)} h\n`);
  }
});

function round(value: number): number {
  return Number(value.toFixed(2));
}
