/**
 * A follower of a local log cut off inside the gap line (CUT_GAP_LINE) it was told: asked again from
 * there, it gets the rest of the line, then what <log>.1 keeps (found in review: the whole line again).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { cutQuiet } from './quiet-log-cut.ts';
import { CUT_GAP_LINE, followLogFile } from '../../src/cloud/local/log-follow.ts';
import { logHistory } from '../../src/cloud/local/log-history.ts';
import type { LogPosition } from '../../src/service/ports.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const lines = (from: number, to: number, tag = 'line') =>
  Array.from({ length: to - from }, (_, i) => `${tag} ${from + i}\n`).join('');

const cap = { capBytes: 100, keepBytes: 250, checkMs: 1 };
const options = { tailLines: 100, pollMs: 5, ended: () => true, signal: new AbortController().signal };

async function followed(file: string, from: LogPosition) {
  const follow = followLogFile(file, { ...options, from })!;
  const got: Buffer[] = [];
  for await (const chunk of follow.chunks) got.push(Buffer.from(chunk));
  return { from: follow.from, text: Buffer.concat(got).toString('utf8') };
}

/** As the CLI asks again (jobs-logs.ts): the cursor it was answered with, its skip plus the bytes it got. */
const after = (from: LogPosition, text: string): LogPosition => ({
  cursor: from.cursor,
  skip: from.skip + Buffer.byteLength(text),
});

/** A log cut twice since a follower's place (byte 50): asked again, it is told the gap. */
async function gapped() {
  const dir = mkdtempSync(join(tmpdir(), 'boa-follow-notice-'));
  dirs.push(dir);
  const file = join(dir, '0.log');
  writeFileSync(file, lines(0, 40, 'lost'));
  await cutQuiet(file, cap);
  appendFileSync(file, lines(0, 30, 'kept'));
  await cutQuiet(file, cap);
  appendFileSync(file, 'latest\n');
  const gone = await followed(file, { cursor: 'h50', skip: 0 });
  expect(gone.text).toBe(`${CUT_GAP_LINE}${readFileSync(`${file}.1`, 'utf8')}latest\n`);
  return { file, gone };
}

it('gives a follower cut off inside the gap line the rest of it, not the whole line again', async () => {
  const { file, gone } = await gapped();
  for (const part of [1, 20, CUT_GAP_LINE.length - 1]) {
    const seen = gone.text.slice(0, part);
    const rest = await followed(file, after(gone.from, seen));
    expect(seen + rest.text).toBe(gone.text);
    // Cut off inside it again: still the rest, exactly.
    const more = rest.text.slice(0, 5);
    const last = await followed(file, after(rest.from, more));
    expect(seen + more + last.text).toBe(gone.text);
  }
});

it('still tells a follower whose own place was in the bytes the gap line stands for the whole line', async () => {
  const { file } = await gapped();
  const { keptFrom } = logHistory(file);
  // A place it reached reading the log (not one inside the line): those bytes are gone, said in full.
  const place = { cursor: `h${keptFrom - 30}`, skip: 20 };
  const again = await followed(file, place);
  expect(again.text).toBe(`${CUT_GAP_LINE}${readFileSync(`${file}.1`, 'utf8')}latest\n`);
  expect(again.from).toEqual({ cursor: `h${keptFrom - CUT_GAP_LINE.length}`, skip: 0 });
});
