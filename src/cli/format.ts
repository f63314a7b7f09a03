import Table from 'cli-table3';

type Cell = string | number | null | undefined;

// Borderless, like kubectl: columns two spaces apart, nothing for a grep or awk to trip on.
const BORDERLESS = {
  top: '',
  'top-mid': '',
  'top-left': '',
  'top-right': '',
  bottom: '',
  'bottom-mid': '',
  'bottom-left': '',
  'bottom-right': '',
  left: '',
  'left-mid': '',
  mid: '',
  'mid-mid': '',
  right: '',
  'right-mid': '',
  middle: '  ',
};

const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };
const escapeChar = (ch: string) =>
  NAMED_ESCAPES[ch] ?? `\\u${ch.codePointAt(0)!.toString(16).padStart(4, '0')}`;

/**
 * Text as it may be shown on a terminal: control characters (ESC sequences, carriage returns, NUL,
 * C1 controls) and invisible format characters (bidi overrides) are shown escaped, never acted on.
 * Names are refused with them now, but older rows and error messages may still carry some.
 */
export function printable(text: string, keepNewlines = false): string {
  return text.replace(/[\p{Cc}\p{Cf}]/gu, (ch) => (keepNewlines && ch === '\n' ? ch : escapeChar(ch)));
}

/** A JSON text for a terminal: the same characters escaped as \uXXXX, which keeps it valid JSON. */
export function printableJson(text: string): string {
  return text.replace(
    /[\u007f-\u009f\p{Cf}]/gu,
    (ch) => `\\u${ch.codePointAt(0)!.toString(16).padStart(4, '0')}`,
  );
}

/** Aligned columns with a header row; numeric columns are right-aligned. */
export function table(head: string[], rows: Cell[][]): string {
  const missing = (cell: Cell) => cell === null || cell === undefined;
  // A column of missing values only ("-" each: no job has a note) is not a number column.
  const numeric = head.map(
    (_, i) =>
      rows.some((row) => !missing(row[i])) &&
      rows.every((row) => missing(row[i]) || /^(-?[\d,.]+%?)?$/.test(String(row[i]))),
  );
  const out = new Table({
    head,
    chars: BORDERLESS,
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    colAligns: numeric.map((n) => (n && rows.length > 0 ? 'right' : 'left')),
  });
  for (const row of rows)
    out.push(row.map((cell) => (cell === null || cell === undefined ? '-' : printable(String(cell)))));
  // cli-table3 pads the last column too; trailing spaces only get in the way.
  return `${out
    .toString()
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')}\n`;
}

/** `key  value` lines with the values aligned. */
export function keyValues(pairs: Array<[string, Cell]>): string {
  const width = Math.max(...pairs.map(([key]) => key.length));
  return pairs
    .map(
      ([key, value]) =>
        `${key.padEnd(width)}  ${value === null || value === undefined ? '-' : printable(String(value))}\n`,
    )
    .join('');
}

/** A count and its noun, singular for 1 ("1 node", "2 nodes"). */
export function counted(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

export function fixed(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined ? '-' : value.toFixed(digits);
}

/** Budgets span 1e-4 (no arrivals yet) to hundreds: four significant digits read well across that. */
export function significant(value: number | null | undefined): string {
  return value === null || value === undefined ? '-' : String(Number(value.toPrecision(4)));
}

export function dollars(value: number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

export function percent(share: number): string {
  return `${(share * 100).toFixed(1)}%`;
}

/** 560.9 -> "9m 21s"; 90061 -> "1d 1h 1m". */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  let rest = Math.round(seconds);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}s`);
  return parts.slice(0, 3).join(' ');
}

/** The API's UTC timestamps to the second; kept free of spaces so table columns split on whitespace. */
export function when(iso: string | null | undefined): string {
  return iso ? iso.replace(/\.\d{3}Z$/, 'Z') : '-';
}
