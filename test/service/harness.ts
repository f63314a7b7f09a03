import { type Logger, pino } from 'pino';
import { resolveConfig } from '../../src/service/config.ts';
import { bootService, InlinePlanComputer } from '../../src/service/boot.ts';
import type { Executor } from '../../src/service/ports.ts';
import type { PlanComputer } from '../../src/service/calculator/computer.ts';

/** A clock tests move by hand. */
export class ManualClock {
  constructor(public t = Date.UTC(2026, 10, 1)) {}
  now(): number {
    return this.t;
  }
  advance(seconds: number): void {
    this.t += seconds * 1000;
  }
}

export async function startService(
  options: {
    dataDir?: string;
    config?: Record<string, unknown>;
    clock?: ManualClock;
    /** What runs executed jobs (default: none with an in-memory store; see bootService). */
    executor?: Executor | null;
    /** Where the service logs (default: nowhere). */
    logger?: Logger;
    /** What computes plans (default: inline, at once). */
    computer?: PlanComputer;
    /** What computes the frontier and the views' load needs (default: `computer`). */
    queries?: PlanComputer;
    /** BOA_ROLLBACK_TO_COPY. */
    rollbackToCopy?: boolean;
  } = {},
) {
  const clock = options.clock ?? new ManualClock();
  const config = resolveConfig({
    dataDir: options.dataDir ?? ':memory:',
    token: 'operator-token-0123456789',
    ...options.config,
  });
  const booted = await bootService(config, {
    clock,
    computer: options.computer ?? new InlinePlanComputer(),
    ...(options.queries ? { queries: options.queries } : {}),
    logger: options.logger ?? pino({ level: 'silent' }),
    dataDir: options.dataDir ?? ':memory:',
    rollbackToCopy: options.rollbackToCopy,
    ...(options.executor === undefined ? {} : { executor: options.executor }),
  });
  const request = async (
    method: string,
    path: string,
    body?: unknown,
    token: string | null = booted.token,
  ) => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await booted.app.request(path, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: res.status, body: json };
  };
  /** Runs ticks, moving the clock by the tick length between them, and waits for the planner. */
  const ticks = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await booted.scheduler.tick();
      await booted.service.planner.idle();
      await booted.scheduler.settle();
      clock.advance(booted.service.deps.config.tickSeconds);
    }
  };
  return { ...booted, clock, request, ticks };
}
