import type { Command } from 'commander';
import type { ClassProfile } from '../../core/profile.ts';
import { contextOf, output } from '../context.ts';
import { CliError, EXIT, usageError } from '../errors.ts';
import { fixed, table } from '../format.ts';
import { parseNumber, readJsonFile } from '../parse.ts';

interface InUseEpoch {
  speedup: Record<string, number>;
  speedupLearned: boolean;
  samples: Record<string, number>;
  /** Absent from a boa before samples were kept by instance type. */
  samplesInstanceType?: string;
}

interface ClassesView {
  classes: Array<{
    name: string;
    priorRatePerHour: number;
    profile: ClassProfile;
    inUse?: { epochs: InUseEpoch[] };
  }>;
}

export function addClassesCommands(program: Command): void {
  const classes = program.command('classes').description('job classes and their measured profiles');

  classes
    .command('list')
    .description('job classes: prior arrival rate, statistical epochs, work, widths measured')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<ClassesView>(
        'GET',
        '/v1/classes',
        undefined,
        undefined,
        ['classes'],
      );
      output(context, text, () => renderClasses(data));
    });

  classes
    .command('put')
    .description('create or replace a job class from a class profile JSON file (profile file format v1)')
    .argument('<file>', 'one class object: {"name", "weight", "rescaleSeconds", "epochs": [...]}')
    .option('--prior-rate <jobsPerHour>', 'expected arrivals per hour until some are observed')
    .action(async (file: string, options: { priorRate?: string }, command: Command) => {
      const context = contextOf(command);
      const profile = classProfileFrom(file);
      const body = {
        profile,
        ...(options.priorRate === undefined
          ? {}
          : { priorRatePerHour: parseNumber(options.priorRate, '--prior-rate') }),
      };
      const path = `/v1/classes/${encodeURIComponent(profile.name)}`;
      const { data, text } = await context.client.json<{ saved: string; dips?: string[] }>('PUT', path, body);
      output(
        context,
        text,
        () => `class ${profile.name} saved; the next plan uses it\n${dipLines(data.dips)}`,
      );
    });

  classes
    .command('delete')
    .description('delete a job class (refused while jobs of it are waiting or running)')
    .argument('<name>', 'the class name')
    .option('--yes', 'on a terminal, do not ask first')
    .action(async (name: string, options: { yes?: boolean }, command: Command) => {
      const context = contextOf(command);
      // Its profile (measured speedups) goes with it: only a saved copy brings it back.
      if (
        context.confirm &&
        !options.yes &&
        !(await context.confirm(
          `delete class ${name}? Its profile goes with it; only 'boa classes put' from a saved copy ` +
            '(boa classes list --json) brings it back',
        ))
      )
        throw new CliError(`class ${name} is kept`, EXIT.failed);
      const { text } = await context.client.json<{ deleted: string }>(
        'DELETE',
        `/v1/classes/${encodeURIComponent(name)}`,
      );
      output(context, text, () => `class ${name} deleted; the next plan leaves it out\n`);
    });

  classes
    .command('validate')
    .description('check a class profile JSON file without saving it')
    .argument('<file>', 'one class object of the profile file format')
    .action(async (file: string, _options: unknown, command: Command) => {
      const context = contextOf(command);
      const profile = classProfileFrom(file);
      const { data, text } = await context.client.json<{ name: string; epochs: number; dips?: string[] }>(
        'POST',
        '/v1/classes/validate',
        { profile },
      );
      output(
        context,
        text,
        () =>
          `${file}: valid class ${data.name} (${data.epochs} statistical epoch${data.epochs === 1 ? '' : 's'})\n` +
          dipLines(data.dips),
      );
    });
}

/** The service validates the profile; here only what the request itself needs: an object with a name. */
function classProfileFrom(file: string): { name: string } {
  const json = readJsonFile(file);
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw usageError(`${file}: a class profile is a JSON object`);
  }
  if ('classes' in json) {
    throw usageError(
      `${file} is a whole profile file; give one class object (e.g. jq '.classes[0]' ${file} > class.json)`,
    );
  }
  const name = (json as { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') {
    throw usageError(`${file}: name: a class profile needs a non-empty string name`);
  }
  return json as { name: string };
}

export function renderClasses(view: ClassesView): string {
  const rows = view.classes.map(({ name, priorRatePerHour, profile }) => {
    const widths = Object.keys(profile.epochs[0]?.speedup ?? {}).map(Number);
    const work = profile.epochs.reduce((sum, e) => sum + e.workSeconds, 0);
    return [
      name,
      fixed(priorRatePerHour, 2),
      profile.epochs.length,
      (work / 3600).toFixed(2),
      `${Math.min(...widths)}-${Math.max(...widths)}`,
      profile.rescaleSeconds,
      profile.weight,
    ];
  });
  const header = ['class', 'prior jobs/h', 'epochs', '1-GPU hours', 'widths', 'rescale s', 'weight'];
  return table(header, rows) + view.classes.flatMap(learnedLines).join('');
}

/** Each epoch whose speedups the plan reads as learned from its jobs, the changed widths and the samples. */
function learnedLines({ name, profile, inUse }: ClassesView['classes'][number]): string[] {
  return (inUse?.epochs ?? []).flatMap((e, j) => {
    const table = profile.epochs[j]?.speedup ?? {};
    const changed = Object.entries(e.speedup)
      .filter(([width, s]) => e.speedupLearned && Math.abs(s - (table[width] ?? s)) > 1e-9)
      .map(([width, s]) => `${width} GPUs ${table[width]} -> ${fixed(s, 2)}`);
    if (changed.length === 0) return [];
    const samples = Object.entries(e.samples).map(([width, n]) =>
      width === 'unknown' ? `${n} without a width` : `${n} at ${width} GPU${width === '1' ? '' : 's'}`,
    );
    const on = e.samplesInstanceType ? ` on ${e.samplesInstanceType}` : '';
    return [
      `${name} epoch ${j}: speedups learned from samples${on} (${samples.join(', ')}): ${changed.join(', ')}\n`,
    ];
  });
}

/**
 * Measured dips are accepted (a plan uses one only to hold a width across epochs); listing them lets a
 * typing error stand out.
 */
function dipLines(dips: readonly string[] | undefined): string {
  if (!dips?.length) return '';
  const lines = dips.map((d) => `  ${d}`).join('\n');
  return `speedup dips (accepted; a plan gives a dipped width only to hold it across epochs):\n${lines}\n`;
}
