/**
 * /openapi.json needs no token, and generating the document takes tens of milliseconds of the service's
 * one thread: found in a security review, one client asking for it in a loop with 8 connections held
 * /healthz at 290 ms (10 ms against a 401 loop), and more connections past the probes' 3 s timeout. It
 * is generated once and served as made.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await boa?.close();
  boa = undefined;
});

describe('/openapi.json', () => {
  it('is generated at the first request only, and every answer is that document', async () => {
    boa = await startService();
    const generate = vi.spyOn(boa.app, 'getOpenAPI31Document');
    const bodies: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const answer = await boa.request('GET', '/openapi.json', undefined, null);
      expect(answer.status).toBe(200);
      bodies.push(answer.body);
    }
    expect(generate).toHaveBeenCalledTimes(1);
    const document = bodies[0] as { openapi: string; paths: Record<string, unknown> };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toContain('/v1/jobs/{id}/logs');
    expect(bodies[1]).toEqual(document);
    expect(bodies[2]).toEqual(document);
  });
});
