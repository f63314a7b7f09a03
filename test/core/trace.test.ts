import { describe, expect, it } from 'vitest';
import { arrivalRatesPerHour, parseTrace } from '../../src/core/trace.ts';

const csv = `name,time,application,num_replicas,batch_size
b-1,3600,bert,2,24
a-0,0,cifar10,1,128
c-2,7200,cifar10,4,512
`;

describe('workload traces', () => {
  it('parses and sorts by arrival', () => {
    const jobs = parseTrace(csv);
    expect(jobs.map((j) => j.name)).toEqual(['a-0', 'b-1', 'c-2']);
    expect(jobs[1]).toEqual({ name: 'b-1', time: 3600, application: 'bert', numReplicas: 2, batchSize: 24 });
  });

  it('rates are jobs over the whole file span, even for a subset of apps', () => {
    const jobs = parseTrace(csv);
    expect(arrivalRatesPerHour(jobs)).toEqual({ bert: 0.5, cifar10: 1 });
    expect(arrivalRatesPerHour(jobs, ['bert'])).toEqual({ bert: 0.5 });
  });

  it('reads a trace spanning under an hour (a batch, one job) as one hour of arrivals', () => {
    const batch = parseTrace(
      'name,time,application,num_replicas,batch_size\nx,60,bert,1,12\ny,60,bert,1,12\n',
    );
    expect(arrivalRatesPerHour(batch)).toEqual({ bert: 2 });
    expect(arrivalRatesPerHour(batch.slice(0, 1))).toEqual({ bert: 1 });
    const halfHour = parseTrace(`${csv.split('\n')[0]}\na,0,cifar10,1,128\nb,1800,cifar10,1,128\n`);
    expect(arrivalRatesPerHour(halfHour)).toEqual({ cifar10: 2 });
    expect(() => arrivalRatesPerHour([])).toThrow(/the trace has no jobs/);
  });

  it('says which line and column are wrong', () => {
    expect(() => parseTrace(csv.replace('3600', 'soon'), 't.csv')).toThrow(
      /t\.csv line 2: time must be a non-negative number/,
    );
    expect(() => parseTrace(csv.replace('2,24', '0,24'), 't.csv')).toThrow(
      /t\.csv line 2: num_replicas must be a positive integer, got "0"/,
    );
    expect(() => parseTrace(csv.replace('2,24', '2,0'), 't.csv')).toThrow(
      /t\.csv line 2: batch_size must be a positive integer, got "0"/,
    );
    expect(() => parseTrace('name,time\nx,1\n', 't.csv')).toThrow(
      /missing column\(s\) application, num_replicas, batch_size/,
    );
    expect(() => arrivalRatesPerHour(parseTrace(csv), ['ncf'])).toThrow(
      /no jobs of ncf in the trace; it has: bert, cifar10/,
    );
  });

  it('reads a file saved with a byte-order mark (Excel\'s "CSV UTF-8") as the same trace', () => {
    expect(parseTrace(`\uFEFF${csv}`, 't.csv')).toEqual(parseTrace(csv, 't.csv'));
  });

  it("counts the file's own lines: blank lines and a quoted field over two lines before the bad row", () => {
    const header = 'name,time,application,num_replicas,batch_size';
    const blank = `${header}\na-0,0,cifar10,1,128\n\n\nb-1,soon,bert,2,24\n`;
    expect(() => parseTrace(blank, 't.csv')).toThrow(/^t\.csv line 5: time must be/);
    expect(() => parseTrace(blank.replace(/\n/g, '\r\n'), 't.csv')).toThrow(/^t\.csv line 5: time must be/);
    const quoted = `${header}\r\n"a\r\n0",0,cifar10,1,128\r\nb-1,0,bert,0,24\r\n`;
    expect(() => parseTrace(quoted, 't.csv')).toThrow(/^t\.csv line 4: num_replicas must be/);
    const twoLines = `${header}\nb-1,0,"bert\n",1,soon\n`;
    expect(() => parseTrace(twoLines, 't.csv')).toThrow(/^t\.csv line 2: batch_size must be/);
  });

  it('reads numbers in decimal only: 0x10, 0b11 and 0o7 are refused, 1e3 and .5 read', () => {
    for (const cell of ['0x10', '0b11', '0o7']) {
      expect(() => parseTrace(csv.replace('3600', cell), 't.csv')).toThrow(
        new RegExp(`t\\.csv line 2: time must be a non-negative number, got "${cell}"`),
      );
      expect(() => parseTrace(csv.replace('2,24', `${cell},24`), 't.csv')).toThrow(/num_replicas must be/);
    }
    const jobs = parseTrace(csv.replace('3600', '1e3').replace('7200', '.5'));
    expect(jobs.map((j) => j.time)).toEqual([0, 0.5, 1000]);
  });

  it('names the row, its job and the cells expected when a row has a cell too few or too many', () => {
    const header = 'name,time,application,num_replicas,batch_size';
    const short = `${header}\na-0,0,cifar10,1,128\n\nb-1,600,cifar10,2\n`;
    expect(() => parseTrace(short, 't.csv')).toThrow(
      't.csv line 4 (job "b-1"): 4 cell(s), expected 5, one per header column ' +
        `(${header}); the row reads "b-1,600,cifar10,2"`,
    );
    const long = `${header}\n"a\n0",0,cifar10,1,128,9\n`;
    expect(() => parseTrace(long, 't.csv')).toThrow(/^t\.csv line 2 \(job "a\n0"\): 6 cell\(s\), expected 5/);
    // A file that is CSV but badly quoted is not called "not a CSV file".
    expect(() => parseTrace(`${header}\n"a,0,cifar10,1,128\n`, 't.csv')).toThrow(
      /^t\.csv: malformed CSV \(Quote Not Closed/,
    );
  });

  it('refuses a header that names a column twice, naming it', () => {
    const twice = 'name,time,application,num_replicas,batch_size,time\nb-1,3600,bert,2,24,0\n';
    expect(() => parseTrace(twice, 't.csv')).toThrow(/^t\.csv: the header names column "time" twice$/);
  });
});
