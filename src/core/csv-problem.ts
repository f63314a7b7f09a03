/** What csv-parse's errors carry beside the message (csv-parse/lib/sync's CsvError). */
export interface CsvParseError extends Error {
  code?: string;
  lines?: number;
  record?: string[];
}

/**
 * csv-parse's error in a reader's words. A row with a cell too few or too many was "not a CSV file
 * (Invalid Record Length: columns length is 5, got 4 on line 3)": it is one, and the user needs the
 * row, what names it (`nameColumn`'s cell, e.g. a trace's job) and the cells expected.
 */
export function csvProblem(
  error: CsvParseError,
  names: string[],
  origin: string,
  nameColumn?: string,
): string {
  if (error.code === 'CSV_RECORD_INCONSISTENT_COLUMNS' && error.record) {
    const cells = error.record;
    // The line the row starts on, as for every other row problem: csv-parse gives the one it ends on.
    const line = (error.lines ?? 0) - cells.reduce((n, cell) => n + cell.split('\n').length - 1, 0);
    const name = nameColumn === undefined ? undefined : cells[names.indexOf(nameColumn)];
    const named = name ? ` (${nameColumn === 'name' ? 'job' : nameColumn} "${name}")` : '';
    return (
      `${origin} line ${line}${named}: ${cells.length} cell(s), expected ${names.length}, one per ` +
      `header column (${names.join(',')}); the row reads "${cells.join(',')}"`
    );
  }
  return `${origin}: malformed CSV (${error.message})`;
}
