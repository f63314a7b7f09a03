import { pino, type Logger } from 'pino';
import type { Clock } from '../../src/service/ports.ts';

/** A clock that only moves when told to, and a sleep that moves it instead of waiting. */
export interface FakeTime {
  readonly clock: Clock;
  sleep(ms: number): Promise<void>;
  advance(ms: number): void;
  /** Every sleep asked for, in order. */
  readonly sleeps: number[];
}

export const START = Date.UTC(2026, 0, 1);

export function fakeTime(start = START): FakeTime {
  let now = start;
  const sleeps: number[] = [];
  return {
    clock: { now: () => now },
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    advance: (ms) => {
      now += ms;
    },
    sleeps,
  };
}

export interface LogRecord {
  readonly level: number;
  readonly event?: string;
  readonly [field: string]: unknown;
}

/** A pino logger whose lines are kept, parsed, to assert on the decisions logged. */
export function captureLogs(): { logger: Logger; lines: LogRecord[]; events: () => string[] } {
  const lines: LogRecord[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines, events: () => lines.flatMap((l) => (l.event ? [l.event] : [])) };
}
