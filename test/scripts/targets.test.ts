import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkTargets } from '../../scripts/lib/targets.ts';

afterEach(() => {
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

describe("a benchmark's targets", () => {
  it('are met within their limits and leave the exit code alone', () => {
    const results = checkTargets({ simMs: { value: 1200, atMost: 2000 }, pods: { value: 5, atLeast: 5 } });
    expect(results).toEqual({
      simMs: { value: 1200, atMost: 2000, met: true },
      pods: { value: 5, atLeast: 5, met: true },
    });
    expect(process.exitCode).toBeUndefined();
  });

  it('say on stderr which one was missed and make the command exit 1', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const results = checkTargets({ decisionP50Ms: { value: 1.5, atMost: 1 } });
    expect(results.decisionP50Ms?.met).toBe(false);
    expect(stderr).toHaveBeenCalledWith('target missed: decisionP50Ms is 1.5, wanted at most 1\n');
    expect(process.exitCode).toBe(1);
  });
});
