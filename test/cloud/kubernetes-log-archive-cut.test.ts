/**
 * Where a kept pod log is cut (log-archive.ts lastBytes): its last bytes from a line's start, and a last
 * line longer than the whole allowance kept as its last bytes, not as nothing.
 */
import { describe, expect, it } from 'vitest';
import { lastBytes } from '../../src/cloud/kubernetes/log-archive.ts';

describe('a kept pod log cut to its last bytes', () => {
  it('keeps a log within the allowance whole', () => {
    expect(lastBytes('a\nb\n', 4)).toBe('a\nb\n');
  });

  it('starts at a line: a cut on a line start keeps that line, one inside a line drops its rest', () => {
    expect(lastBytes('aa\nbb\ncc\n', 6)).toBe('bb\ncc\n');
    expect(lastBytes('aa\nbb\ncc\n', 7)).toBe('bb\ncc\n');
    expect(lastBytes('aa\nbb\ncc\n', 5)).toBe('cc\n');
  });

  it('keeps the last bytes of a last line longer than the allowance', () => {
    const bar = `start\n${'progress\r'.repeat(100)}done\n`;
    const kept = lastBytes(bar, 50);
    expect(Buffer.byteLength(kept)).toBe(50);
    expect(kept.endsWith('progress\rdone\n')).toBe(true);
    expect(lastBytes('short\nno newline at the end, and long', 10)).toBe(', and long');
  });
});
