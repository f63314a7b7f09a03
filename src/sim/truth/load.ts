/**
 * The only file of the ground-truth model that touches the file system. The parsers take CSV text so
 * tests can feed small tables; loadAppTables reads `<dataDir>/traces/<app>/`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import type { AppTables, PlacementRow, ScalabilityRow, ValidationRow, ValidationTable } from './tables.ts';

export class TraceError extends Error {
  override name = 'TraceError';
}

type Raw = Record<string, string>;

function records(text: string, origin: string, columns: readonly string[]): Raw[] {
  let rows: Raw[];
  try {
    rows = parse(text, { columns: true, skip_empty_lines: true, trim: true }) as Raw[];
  } catch (err) {
    throw new TraceError(`${origin}: ${(err as Error).message}`);
  }
  const first = rows[0];
  if (first === undefined) throw new TraceError(`${origin}: no data rows`);
  const missing = columns.filter((c) => !(c in first));
  if (missing.length > 0) throw new TraceError(`${origin}: missing column(s) ${missing.join(', ')}`);
  return rows;
}

function num(row: Raw, column: string, origin: string, line: number): number {
  const value = Number(row[column]);
  if (row[column] === '' || !Number.isFinite(value)) {
    throw new TraceError(`${origin} row ${line}: ${column} is not a number: "${row[column]}"`);
  }
  return value;
}

export function parsePlacementsCsv(text: string, origin = 'placements.csv'): PlacementRow[] {
  const cols = ['placement', 'local_bsz', 'step_time', 'sync_time'] as const;
  return records(text, origin, cols).map((r, i) => {
    const placement = r.placement ?? '';
    if (!/^[1-9]+$/.test(placement)) {
      throw new TraceError(
        `${origin} row ${i + 1}: placement must be GPU-per-node digits, got "${placement}"`,
      );
    }
    return {
      placement,
      localBsz: num(r, 'local_bsz', origin, i + 1),
      stepTime: num(r, 'step_time', origin, i + 1),
      syncTime: num(r, 'sync_time', origin, i + 1),
    };
  });
}

export function parseScalabilityCsv(text: string, origin = 'scalability.csv'): ScalabilityRow[] {
  const cols = ['num_nodes', 'num_replicas', 'local_bsz', 'step_time', 'sync_time'] as const;
  return records(text, origin, cols).map((r, i) => ({
    numNodes: num(r, 'num_nodes', origin, i + 1),
    numReplicas: num(r, 'num_replicas', origin, i + 1),
    localBsz: num(r, 'local_bsz', origin, i + 1),
    stepTime: num(r, 'step_time', origin, i + 1),
    syncTime: num(r, 'sync_time', origin, i + 1),
  }));
}

export function parseValidationCsv(text: string, origin = 'validation.csv'): ValidationRow[] {
  const cols = ['progress', 'iteration', 'metric', 'grad_sqr', 'grad_var'] as const;
  const rows = records(text, origin, cols).map((r, i) => ({
    progress: num(r, 'progress', origin, i + 1),
    iteration: num(r, 'iteration', origin, i + 1),
    metric: num(r, 'metric', origin, i + 1),
    gradSqr: num(r, 'grad_sqr', origin, i + 1),
    gradVar: num(r, 'grad_var', origin, i + 1),
  }));
  rows.forEach((row, i) => {
    const prev = rows[i - 1];
    if (prev !== undefined && row.progress < prev.progress) {
      throw new TraceError(`${origin} row ${i + 1}: progress decreases`);
    }
  });
  return rows;
}

/** Assembles tables from CSV texts keyed by batch size (pure; used by loadAppTables and tests). */
export function tablesFromCsv(
  placements: string,
  scalability: string | undefined,
  validation: ReadonlyMap<number, string>,
): AppTables {
  if (validation.size === 0) throw new TraceError('no validation-B.csv tables');
  const tables: ValidationTable[] = [...validation.entries()]
    .map(([batchSize, text]) => ({
      batchSize,
      rows: parseValidationCsv(text, `validation-${batchSize}.csv`),
    }))
    .sort((a, b) => a.batchSize - b.batchSize);
  return {
    placements: parsePlacementsCsv(placements),
    scalability: scalability === undefined ? [] : parseScalabilityCsv(scalability),
    validation: tables,
  };
}

/** Apps that have traces/<app>/placements.csv under dataDir, sorted by name. */
export function listTraceApps(dataDir: string): string[] {
  const traces = path.join(dataDir, 'traces');
  if (!existsSync(traces)) throw new TraceError(`no traces/ folder under ${dataDir}`);
  return readdirSync(traces, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(traces, d.name, 'placements.csv')))
    .map((d) => d.name)
    .sort();
}

export function loadAppTables(dataDir: string, app: string): AppTables {
  const dir = path.join(dataDir, 'traces', app);
  const placementsPath = path.join(dir, 'placements.csv');
  if (!existsSync(placementsPath)) throw new TraceError(`no traces/${app}/placements.csv under ${dataDir}`);
  const read = (file: string) => readFileSync(path.join(dir, file), 'utf8');
  const validation = new Map<number, string>();
  for (const file of readdirSync(dir)) {
    const match = /^validation-([0-9]+)\.csv$/.exec(file);
    if (match?.[1] !== undefined) validation.set(Number(match[1]), read(file));
  }
  if (validation.size === 0) throw new TraceError(`no traces/${app}/validation-B.csv files under ${dataDir}`);
  const scalability = existsSync(path.join(dir, 'scalability.csv')) ? read('scalability.csv') : undefined;
  try {
    return tablesFromCsv(read('placements.csv'), scalability, validation);
  } catch (err) {
    if (err instanceof TraceError) throw new TraceError(`traces/${app}/${err.message}`);
    throw err;
  }
}
