import type { Command } from 'commander';
import type { jobView } from '../../service/views.ts';
import { contextOf, output } from '../context.ts';
import { CliError, EXIT, type ExitCode, usageError } from '../errors.ts';
import { printable, printableJson } from '../format.ts';
import { resolveJobRef } from '../job-refs.ts';

type JobView = ReturnType<typeof jobView>;

/**
 * `boa jobs cancel <job...>`: several jobs at once (ids from `jobs list | xargs`, or names), each
 * reported as it goes, as `kill` and `scancel` do: one that cannot be cancelled does not stop the rest.
 */
export function addCancelCommand(jobs: Command): void {
  // The verbs other tools stop a job with (docker stop, kill, kubectl delete): commander suggested
  // `show` for `stop`, a read-only command (found by a newcomer's review).
  for (const verb of ['stop', 'kill', 'rm', 'delete']) {
    jobs
      .command(verb, { hidden: true })
      .argument('[job...]')
      .allowUnknownOption()
      .action(() => {
        throw usageError(`boa jobs has no ${verb}: to stop a job, cancel it: boa jobs cancel <job...>`);
      });
  }
  jobs
    .command('cancel')
    .description('cancel jobs: their GPUs are freed at once')
    .argument('<job...>', 'job ids, or names of waiting or running jobs (see boa jobs list)')
    .action(async (given: string[], _options: unknown, command: Command) => {
      // A name given twice would find its job cancelled the second time and report a failure.
      const refs = [...new Set(given)];
      const context = contextOf(command);
      let worst: ExitCode = EXIT.ok;
      let failures = 0;
      const done = new Set<number>();
      for (const ref of refs) {
        try {
          const id = await resolveJobRef(context.client, ref, true);
          if (done.has(id)) continue;
          done.add(id);
          const { data, text } = await context.client.json<JobView>(
            'POST',
            `/v1/jobs/${id}/cancel`,
            undefined,
            undefined,
            ['id', 'state'],
          );
          output(context, text, () => `job ${data.id} is ${data.state}\n`);
        } catch (error) {
          // No service or no token: every other job would fail the same way.
          if (!(error instanceof CliError) || refs.length === 1) throw error;
          if (error.exitCode === EXIT.unreachable || error.exitCode === EXIT.unauthorized) throw error;
          if (context.json && error.body) context.print(`${printableJson(error.body)}\n`);
          process.stderr.write(`boa: ${printable(error.message, true)}\n`);
          worst = Math.max(worst, error.exitCode) as ExitCode;
          failures += 1;
        }
      }
      if (failures > 0) throw new CliError(`${failures} of ${refs.length} not cancelled`, worst);
    });
}
