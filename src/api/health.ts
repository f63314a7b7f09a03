import type { BoaService } from '../service/service.ts';

/** Ready while a tick has succeeded within this many tick intervals (the dashboard's health line flags the same). */
export const READY_TICKS = 3;

/**
 * A tick running longer than this is hung (a call that never returns): only a restart ends it, since the
 * loop starts no tick while one runs. Far above a slow tick's worst case: every cloud call's bounded retries.
 * The same at every tick interval: a tick's work does not grow with the interval, and the startup probe
 * (infra/k8s/boa.ts) gives a first tick this long, so a tick liveness would wait for is never one a
 * restart cuts short each time (10 ticks at 120 s was 20 minutes, past the probe's 15).
 */
export const HUNG_AFTER_MS = 10 * 60_000;

export interface Probe {
  readonly status: 200 | 503;
  readonly body: Record<string, unknown>;
}

/**
 * Liveness: 503 once a tick has run past HUNG_AFTER_MS, so Kubernetes restarts boa (running jobs are adopted
 * by the next start). Ticks that fail quickly are not a reason to restart: readiness and the alarms show them.
 * The probes need no token, so they name no error: the log does (tick_failed, pool_unavailable).
 */
export function liveness(service: BoaService): Probe {
  const { state, deps } = service;
  const since = state.tickStartedAt;
  const runningMs = since === undefined ? 0 : deps.clock.now() - since;
  if (runningMs <= HUNG_AFTER_MS) return { status: 200, body: { ok: true } };
  return {
    status: 503,
    body: {
      ok: false,
      reason: `the scheduling tick started at ${new Date(since!).toISOString()} has run ${Math.round(runningMs / 1000)} s: the scheduler is hung`,
    },
  };
}

/** Readiness: 503 before the first tick and once no tick has succeeded for READY_TICKS intervals. */
export function readiness(service: BoaService): Probe {
  const { state, deps } = service;
  const last = state.lastTickAt;
  const lastTickAt = last ?? null;
  if (last === undefined) return { status: 503, body: { ready: false, lastTickAt, reason: 'no tick yet' } };
  const ageMs = deps.clock.now() - last;
  const tickSeconds = deps.config.tickSeconds;
  if (ageMs <= READY_TICKS * tickSeconds * 1000) return { status: 200, body: { ready: true, lastTickAt } };
  return {
    status: 503,
    body: {
      ready: false,
      lastTickAt,
      reason: `no scheduling tick has succeeded for ${Math.round(ageMs / 1000)} s (one every ${tickSeconds} s expected): ticks are failing or hung, see the log's tick_failed`,
    },
  };
}
