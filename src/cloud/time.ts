import type { Clock } from '../service/ports.ts';

/** Waits `ms` milliseconds. Injected so tests advance a fake clock instead of waiting. */
export type Sleep = (ms: number) => Promise<void>;

export const systemClock: Clock = { now: () => Date.now() };

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
