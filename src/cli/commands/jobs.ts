import { type Command, Option } from 'commander';
import type { jobView } from '../../service/views.ts';
import { contextOf, output } from '../context.ts';
import { keyValues, table, when } from '../format.ts';
import { parseJobId } from '../parse.ts';

type JobView = ReturnType<typeof jobView>;

export const JOB_STATES = ['waiting', 'running', 'done', 'cancelled'] as const;

export function addJobsCommands(program: Command): void {
  const jobs = program.command('jobs').description('training jobs: list, submit (register), cancel');

  jobs
    .command('list')
    .description('list jobs, oldest first')
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(JOB_STATES))
    .option('--limit <n>', 'at most this many jobs (the service allows 1 to 10000; default 1000)')
    .action(async (options: { state?: string; limit?: string }, command: Command) => {
      const context = contextOf(command);
      const query = new URLSearchParams();
      if (options.state) query.set('state', options.state);
      if (options.limit !== undefined) query.set('limit', options.limit);
      const path = query.size > 0 ? `/v1/jobs?${query}` : '/v1/jobs';
      const { data, text } = await context.client.json<{ jobs: JobView[] }>('GET', path);
      output(context, text, () => renderJobs(data.jobs));
    });

  jobs
    .command('submit')
    .description("register a training job of a class; prints its id and the job's own token")
    .argument('<class>', 'job class, e.g. cifar10 (see boa classes list)')
    .option('--name <name>', 'a name to recognise the job by')
    .action(async (className: string, options: { name?: string }, command: Command) => {
      const context = contextOf(command);
      const body = { class: className, ...(options.name === undefined ? {} : { name: options.name }) };
      const { data, text } = await context.client.json<{ id: number; token: string; job: JobView }>(
        'POST',
        '/v1/jobs',
        body,
      );
      output(context, text, () =>
        keyValues([
          ['job', `${data.id} (${data.job.class}, ${data.job.state})`],
          ['token', data.token],
          [
            'note',
            "the job's launcher needs this token: it authenticates the job's allocation, progress and" +
              ' complete calls. It is shown only now.',
          ],
        ]),
      );
    });

  jobs
    .command('cancel')
    .description('cancel a job: its GPUs are freed at once')
    .argument('<id>', 'job id (see boa jobs list)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = contextOf(command);
      const jobId = parseJobId(id);
      const { data, text } = await context.client.json<JobView>('POST', `/v1/jobs/${jobId}/cancel`);
      output(context, text, () => `job ${data.id} is ${data.state}\n`);
    });
}

function renderJobs(jobs: JobView[]): string {
  if (jobs.length === 0) return 'no jobs\n';
  const rows = jobs.map((j) => [
    j.id,
    j.name,
    j.class,
    j.state,
    j.statEpoch,
    j.width,
    when(j.submittedAt),
    when(j.startedAt),
    when(j.finishedAt),
  ]);
  return table(['id', 'name', 'class', 'state', 'epoch', 'GPUs', 'submitted', 'started', 'finished'], rows);
}
