import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  listTraceApps,
  loadAppTables,
  parsePlacementsCsv,
  parseValidationCsv,
} from '../../../src/sim/truth/load.ts';

describe('CSV parsing', () => {
  it('reads typed rows and keeps placements as digit strings', () => {
    const rows = parsePlacementsCsv('placement,local_bsz,step_time,sync_time\n1222,32,0.5,0.125\n');
    expect(rows).toEqual([{ placement: '1222', localBsz: 32, stepTime: 0.5, syncTime: 0.125 }]);
  });

  it('names the file, row and column of bad input', () => {
    expect(() => parsePlacementsCsv('placement,local_bsz,step_time\n1,2,3\n', 'p.csv')).toThrow(
      /p.csv: missing column\(s\) sync_time/,
    );
    expect(() => parsePlacementsCsv('placement,local_bsz,step_time,sync_time\n1,x,3,0\n', 'p.csv')).toThrow(
      /p.csv row 1: local_bsz is not a number/,
    );
    expect(() => parsePlacementsCsv('placement,local_bsz,step_time,sync_time\n1a,1,3,0\n')).toThrow(/digits/);
    expect(() =>
      parseValidationCsv('progress,iteration,metric,grad_sqr,grad_var\n5,1,0,1,1\n4,2,0,1,1\n'),
    ).toThrow(/row 2: progress decreases/);
    expect(() => parseValidationCsv('progress,iteration,metric,grad_sqr,grad_var\n')).toThrow(/no data rows/);
  });
});

describe('loading a data folder', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'boa-traces-'));
  const app = path.join(dir, 'traces', 'toy');
  mkdirSync(app, { recursive: true });
  mkdirSync(path.join(dir, 'traces', 'empty'));
  writeFileSync(path.join(app, 'placements.csv'), 'placement,local_bsz,step_time,sync_time\n1,2,1,0\n');
  writeFileSync(
    path.join(app, 'validation-8.csv'),
    'progress,iteration,metric,grad_sqr,grad_var\n1,1,0,1,1\n',
  );
  writeFileSync(
    path.join(app, 'validation-16.csv'),
    'progress,iteration,metric,grad_sqr,grad_var\n1,1,0,2,2\n',
  );

  it('lists apps that have placements.csv', () => {
    expect(listTraceApps(dir)).toEqual(['toy']);
    expect(() => listTraceApps(path.join(dir, 'nope'))).toThrow(/no traces\/ folder under/);
  });

  it('reads every validation-B.csv sorted by B; scalability.csv is optional', () => {
    const tables = loadAppTables(dir, 'toy');
    expect(tables.validation.map((v) => v.batchSize)).toEqual([8, 16]);
    expect(tables.scalability).toEqual([]);
  });

  it('says which app file is missing', () => {
    expect(() => loadAppTables(dir, 'bert')).toThrow(`no traces/bert/placements.csv under ${dir}`);
  });
});
