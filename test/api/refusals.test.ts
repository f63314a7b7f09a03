import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { REFUSAL_LOG_INTERVAL_MS, RefusalLog } from '../../src/api/refusals.ts';

afterEach(() => vi.useRealTimers());

describe('the refusal log', () => {
  it('logs a burst that is followed by silence once its minute is over', () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const log = new RefusalLog(
      pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }),
      () => Date.now(),
    );
    for (let i = 0; i < 5; i++) log.refused('/v1/status');
    const logged = () => lines.map((line) => JSON.parse(line).refused);
    expect(logged()).toEqual([1]);
    vi.advanceTimersByTime(REFUSAL_LOG_INTERVAL_MS);
    expect(logged()).toEqual([1, 4]);
    vi.advanceTimersByTime(10 * REFUSAL_LOG_INTERVAL_MS);
    expect(logged()).toEqual([1, 4]);
  });
});
