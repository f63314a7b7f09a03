/**
 * Every row of a Markdown table in the docs has as many cells as its header: a `|` inside a code span
 * (`a | b`) still ends a cell on GitHub unless written `\|`, and the cells past the header's count are
 * dropped unseen (docs/cli.md's jobs row lost its whole description that way; found in a docs audit).
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownFiles, REPO } from './markdown-files.ts';

/** A table row's cells as GitHub splits them: at every `|` not escaped, code spans included. */
export function tableCells(row: string): number {
  const inner = row
    .trim()
    .replace(/^\|/, '')
    .replace(/(?<!\\)\|$/, '');
  return inner.split(/(?<!\\)\|/).length;
}

/** Rows whose cell count differs from their table's header, outside fenced code blocks. */
export function uneven(markdown: string): Array<{ line: number; cells: number; header: number }> {
  const found: Array<{ line: number; cells: number; header: number }> = [];
  let fenced = false;
  let header: number | undefined;
  markdown.split('\n').forEach((text, i) => {
    if (text.startsWith('```')) fenced = !fenced;
    if (fenced || !text.startsWith('|')) {
      header = undefined;
      return;
    }
    if (header === undefined) header = tableCells(text);
    else if (!/^\|[\s:|-]+$/.test(text.trim()) && tableCells(text) !== header)
      found.push({ line: i + 1, cells: tableCells(text), header });
  });
  return found;
}

describe('tables in the Markdown', () => {
  it('reads a pipe in a code span as a cell break unless escaped', () => {
    expect(tableCells('| `a \\| b` | c |')).toBe(2);
    expect(tableCells('| `a | b` | c |')).toBe(3);
    expect(uneven('| x | y |\n|---|---|\n| `a | b` | c |\n')).toEqual([{ line: 3, cells: 3, header: 2 }]);
  });

  it('have as many cells in every row as in the header', () => {
    const files = markdownFiles(REPO);
    expect(files.length).toBeGreaterThan(10);
    const bad = files.flatMap((file) =>
      uneven(readFileSync(file, 'utf8')).map(
        (r) => `${relative(REPO, file)}:${r.line}: ${r.cells} cells, the header ${r.header}`,
      ),
    );
    expect(bad).toEqual([]);
  });
});
