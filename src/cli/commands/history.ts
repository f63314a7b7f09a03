import { basename } from 'node:path';
import type { Command } from 'commander';
import { contextOf, output } from '../context.ts';
import { CliError, usageError } from '../errors.ts';
import { counted, keyValues, table, when } from '../format.ts';
import { MAX_IMPORT_ARRIVALS, newestArrivals, placeTrace, readHistoryFile } from '../history-file.ts';
import { parseNumber } from '../parse.ts';

interface ImportRecord {
  id: number;
  source: string;
  observedFrom: string;
  firstArrivalAt: string;
  lastArrivalAt: string;
  arrivals: number;
  importedAt: string;
}
interface HistoryView {
  recordStartedAt: string;
  observedSince: string;
  imports: ImportRecord[];
}
interface Imported {
  import: ImportRecord;
  alreadyImported: boolean;
  leftOut: number;
}

/** One file's import; `dropped`: of classes the service lacks; `older`: past what one import takes. */
interface ImportResult {
  file: string;
  data: Imported;
  text: string;
  dropped: number;
  older: number;
}

type Arrivals = Array<{ className: string; submittedAt: number }>;
type Kept = { sent: Arrivals; older: number; dropped: number };

/**
 * The trace placed where an import of the same file name ended before, and sent: the same content is
 * that import (`alreadyImported`). Other content there overlaps it (409), so the next import of that
 * name is tried, and undefined when none is the same.
 */
async function reimport(
  held: HistoryView,
  source: string,
  jobs: ReadonlyArray<{ className: string; seconds: number }>,
  keep: (arrivals: Arrivals) => Kept,
  post: (sent: Arrivals) => Promise<{ data: Imported; text: string }>,
): Promise<Omit<ImportResult, 'file'> | undefined> {
  const relative = keep(placeTrace(jobs, 0, 0));
  const last = relative.sent.reduce((latest, a) => Math.max(latest, a.submittedAt), Number.NEGATIVE_INFINITY);
  const before = held.imports.filter((i) => i.source === source).sort((a, b) => b.id - a.id);
  for (const previous of before) {
    const shift = Date.parse(previous.lastArrivalAt) - last;
    const sent = relative.sent.map((a) => ({ ...a, submittedAt: a.submittedAt + shift }));
    try {
      return { ...(await post(sent)), older: relative.older, dropped: relative.dropped };
    } catch (error) {
      if (!(error instanceof CliError && errorCode(error) === 'history_overlaps')) throw error;
    }
  }
  return undefined;
}

function errorCode(error: CliError): string | undefined {
  try {
    return (JSON.parse(error.body ?? '') as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/** compare --history's least gap between days: a minute. */
const DEFAULT_GAP_HOURS = 1 / 60;

export function addHistoryCommands(program: Command): void {
  const history = program
    .command('history')
    .description("arrivals from before the service's own record, read by the rate estimator (never run)");

  history
    .command('import')
    .description(
      'import past submissions so the first plans read days of arrivals instead of a few: job logs ' +
        '(class,submitted_at) at their times, workload traces (name,time,application,...) back to back ' +
        'before what the service has observed, the last file nearest',
    )
    .argument('<files...>', 'CSV files: job logs or workload traces')
    .option(
      '--gap-hours <hours>',
      'quiet hours before each trace (default: a minute, the least; 16 after 8-hour days: working days)',
    )
    .option('--known-classes', 'leave out arrivals of classes the service does not have, and say how many')
    .action(
      async (files: string[], options: { gapHours?: string; knownClasses?: boolean }, command: Command) => {
        const context = contextOf(command);
        const gapHours =
          options.gapHours === undefined ? DEFAULT_GAP_HOURS : parseNumber(options.gapHours, '--gap-hours');
        if (!(gapHours >= DEFAULT_GAP_HOURS))
          throw usageError(
            // Rounded up, so the value named is accepted: "(0.016666666666666666)" read as a bug.
            `--gap-hours must be at least a minute (${(Math.ceil(DEFAULT_GAP_HOURS * 1e4) / 1e4).toFixed(4)} hours), got ${options.gapHours}`,
          );
        const parsed = files.map((file) => ({ file, content: readHistoryFile(file) }));
        const known = options.knownClasses
          ? new Set(
              (
                await context.client.json<{ classes: Array<{ name: string }> }>('GET', '/v1/classes')
              ).data.classes.map((c) => c.name),
            )
          : undefined;
        // Every file checked before any is imported: a refusal after the others went in left them
        // imported unannounced.
        if (known) {
          for (const { file, content } of parsed) {
            const classes = content.kind === 'log' ? content.arrivals : content.jobs;
            if (!classes.some((a) => known.has(a.className)))
              throw usageError(`${file}: no arrivals of the service's classes (${[...known].join(', ')})`);
          }
        }
        const results: ImportResult[] = [];
        const keep = (arrivals: Arrivals) => {
          const kept = known ? arrivals.filter((a) => known.has(a.className)) : arrivals;
          return { ...newestArrivals(kept), dropped: arrivals.length - kept.length };
        };
        const post = (file: string, source: string, sent: Arrivals) =>
          context.client
            .json<Imported>('POST', '/v1/history', { source, arrivals: sent })
            .catch((error: unknown) => {
              // Each file is its own import: say which went in before this one failed.
              if (error instanceof CliError && results.length > 0) {
                const done = results.map((r) => `${r.file} (#${r.data.import.id})`).join(', ');
                error.message = `${file}: ${error.message} (imported before it: ${done})`;
              }
              throw error;
            });
        // The last file is nearest the service's record: imported first, each next one placed before it.
        for (const { file, content } of [...parsed].reverse()) {
          const source = basename(file).slice(0, 200);
          if (content.kind === 'log') {
            const { sent, older, dropped } = keep(content.arrivals);
            results.push({ file, ...(await post(file, source, sent)), dropped, older });
            continue;
          }
          const { data: held } = await context.client.json<HistoryView>('GET', '/v1/history');
          // A trace has no times of its own: imported again, it goes back where it went before (the
          // service then finds the same content, one import), not before it as a second day.
          const again = await reimport(held, source, content.jobs, keep, (sent) => post(file, source, sent));
          if (again) {
            results.push({ file, ...again });
            continue;
          }
          // Before the earliest day the service holds: its first arrival, or its own record's start.
          const earliest = Math.min(
            Date.parse(held.recordStartedAt),
            ...held.imports.map((i) => Date.parse(i.firstArrivalAt)),
          );
          const { sent, older, dropped } = keep(placeTrace(content.jobs, earliest, gapHours * 3_600_000));
          results.push({ file, ...(await post(file, source, sent)), dropped, older });
        }
        results.reverse();
        output(context, `[${results.map((r) => r.text).join(',')}]`, () =>
          results.map(renderImported).join(''),
        );
      },
    );

  history
    .command('list')
    .description("imported histories, and where the rate estimator's observation starts")
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<HistoryView>(
        'GET',
        '/v1/history',
        undefined,
        undefined,
        ['imports'],
      );
      output(context, text, () => renderHistory(data));
    });

  history
    .command('export')
    .description(
      "every submission the rate estimator reads, the jobs' and imported ones, as a job log " +
        "(class,submitted_at): what 'boa history import' on another service starts from",
    )
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<{
        arrivals: Array<{ className: string; submittedAt: string }>;
      }>('GET', '/v1/history/arrivals');
      output(context, text, () =>
        ['class,submitted_at', ...data.arrivals.map((a) => `${a.className},${a.submittedAt}`), ''].join('\n'),
      );
    });

  history
    .command('delete')
    .description('delete an imported history: the rate estimator no longer reads it')
    .argument('<id>', 'the import id (boa history list)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const context = contextOf(command);
      if (!/^\d+$/.test(id) || Number(id) < 1)
        throw usageError(`an import id is a positive integer (see boa history list), got "${id}"`);
      const { data, text } = await context.client.json<{ deleted: ImportRecord }>(
        'DELETE',
        `/v1/history/${id}`,
      );
      output(
        context,
        text,
        () =>
          `history import ${id} deleted (${counted(data.deleted.arrivals, 'arrival')} from ` +
          `${data.deleted.source}); the next plan leaves ${data.deleted.arrivals === 1 ? 'it' : 'them'} out\n`,
      );
    });
}

function renderImported(r: ImportResult): string {
  const i = r.data.import;
  const what = r.data.alreadyImported
    ? `${r.file}: imported before, as #${i.id}; nothing changed`
    : `${r.file}: imported ${i.arrivals} arrival${i.arrivals === 1 ? '' : 's'} as #${i.id}, ${when(i.firstArrivalAt)} to ${when(i.lastArrivalAt)}; the next plan reads them`;
  const notes = [
    ...(r.dropped > 0
      ? [`${counted(r.dropped, 'arrival')} of classes the service does not have left out`]
      : []),
    ...(r.older > 0
      ? [
          `${r.older} oldest left out: one import takes the newest ${MAX_IMPORT_ARRIVALS.toLocaleString('en-US')}, ` +
            'the most the rate estimator keeps',
        ]
      : []),
    ...(r.data.leftOut > 0 ? [`${r.data.leftOut} older than the rate estimator reads left out`] : []),
  ];
  return `${what}\n${notes.map((n) => `  ${n}\n`).join('')}`;
}

function renderHistory(h: HistoryView): string {
  const summary = keyValues([
    ['record began', when(h.recordStartedAt)],
    ['observed since', `${when(h.observedSince)} (the rate estimator counts hours from here)`],
  ]);
  if (h.imports.length === 0) return `${summary}no history imported\n`;
  const rows = h.imports.map((i) => [
    i.id,
    i.source,
    i.arrivals,
    when(i.firstArrivalAt),
    when(i.lastArrivalAt),
    when(i.importedAt),
  ]);
  return `${summary}${table(['id', 'source', 'arrivals', 'first', 'last', 'imported'], rows)}`;
}
