/**
 * What the embedded default's start loads: neither the AWS SDK nor the Kubernetes client (their
 * adapters are imported only when configured, boot.ts), nor Vega (loaded with the first chart drawn:
 * about a second of start-up and 35 MB of memory in every process that imports the API otherwise).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';

const root = mkdtempSync(join(tmpdir(), 'boa-boot-packages-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const HEAVY = /^(vega|vega-lite|@aws-sdk\/.*|@kubernetes\/client-node)$/;

it('a start on the embedded default loads no cloud SDK and no charting until a chart is drawn', () => {
  const fixture = join(import.meta.dirname, '..', 'fixtures', 'boot-loaded-packages.ts');
  const output = execFileSync(process.execPath, ['--import', 'tsx', fixture, join(root, 'data')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const [status, chart] = output
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { after: string; status: number; loaded: string[] });
  expect(status?.status).toBe(200);
  expect(status?.loaded.filter((name) => HEAVY.test(name))).toEqual([]);
  // The check sees what it looks for: the chart's request loads Vega.
  expect(chart?.status).toBe(200);
  expect(chart?.loaded).toEqual(expect.arrayContaining(['vega', 'vega-lite']));
});
