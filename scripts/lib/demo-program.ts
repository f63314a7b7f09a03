/** The demo's command line: the replay's inputs and the service settings it runs with. */
import { Option } from 'commander';
import { scriptProgram } from './inputs.ts';
import { DEFAULT_PROFILES } from './paths.ts';
import { DEFAULT_DATA } from './sim-setup.ts';
import { DEFAULT_PLAN_CAP } from '../../src/core/plan-cap.ts';

export const demoProgram = scriptProgram('demo')
  .description(
    'The boa service replaying a trace on a virtual clock, with emulated jobs on the measured ground truth; prints the JSON metrics',
  )
  .requiredOption('--trace <file>', 'workload CSV')
  .requiredOption('--budget <gpuHoursPerHour>', 'the budget to set')
  .option('--apps <list>', 'only these applications')
  .option('--speed <x>', 'virtual seconds per real second, or max', 'max')
  .option('--state <dir>', 'service data directory; an unfinished replay there is resumed')
  .option('--data <dir>', 'measured Pollux data (ground truth)', DEFAULT_DATA)
  .option('--profiles <file>', 'job-class profiles', DEFAULT_PROFILES)
  .option('--tick-seconds <s>', 'scheduling tick', '60')
  .addOption(
    new Option(
      '--prior <source>',
      "the rate estimator's prior: none (a new service's, default) or trace (the trace's own rates: oracle input)",
    )
      .choices(['none', 'trace'])
      .default('none'),
  )
  .addOption(
    new Option('--executor <kind>', 'run each job as real processes (local executor)').choices(['local']),
  )
  .option(
    '--warmup-hours <h>',
    "the service's opt-in warm-up (warmupHours): half the budget rising to all of it",
    '0',
  )
  .option(
    '--budget-window-hours <h>',
    "the service's budget window (budgetWindowHours): the hours the budget's time-average is held over",
    '24',
  )
  .option(
    '--drain-after-hours <h>',
    "the service's drain (drainAfterHours): hours without a submission before the running jobs take the budget; 0: never",
    '2',
  )
  .option(
    '--fill-below-band <share>',
    "the service's opt-in fill (fillBelowBand): while the budget window pays more than this share under the budget, the running jobs take it; 0: never",
    '0',
  )
  .option(
    '--plan-cap-multiple <m>',
    "the service's plan cap (planCapMultiple): plans get at most m times what the load needs; 0: none",
    String(DEFAULT_PLAN_CAP.multiple),
  )
  .option(
    '--credit-spend-hours <h>',
    "the service's credit for a tight budget (creditSpendHours): while the load needs 90% of the budget, plans spend the window's unspent budget over h hours; 0: never",
    '4',
  )
  .option(
    '--credit-load-share <s>',
    "the credit's load share (creditLoadShare): spent whole while the load needs this share of the budget, in part from 0.2 below; lower spends more of a generous budget",
    '0.9',
  )
  .option(
    '--history <files>',
    "other traces' submissions imported before the replay (POST /v1/history), back to back as compare --history places them: a service that ran through those days",
  )
  .option('--history-gap-hours <h>', 'quiet hours between the history days and before the trace', '0')
  .option(
    '--rate-confidence <z>',
    "the service's opt-in confidence bound on arrival rates (rateConfidence): the load planned z standard errors above its estimate; 0: the estimate",
    '0',
  )
  .option(
    '--first-day-arrivals <a>',
    "the service's opt-in first-day arrivals (firstDayArrivals): until its rate window is full, every class planned as if <a> more of its jobs had arrived; 0: none",
    '0',
  );
