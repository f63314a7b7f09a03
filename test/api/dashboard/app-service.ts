/**
 * A service for the dashboard's node tests (load-app.ts draws what it answers): started with a prior
 * rate for cifar10, closed after each case of the file that asked for it.
 */
import { afterEach } from 'vitest';
import { startService } from '../../service/harness.ts';

export type Service = Awaited<ReturnType<typeof startService>>;

/** Registers the afterEach that closes them; returns the function that starts one (config merged). */
export function servicesClosedAfterEach() {
  const services: Service[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.close();
  });
  return async function service(config: Record<string, unknown> = {}) {
    const s = await startService({ config: { priorRates: { cifar10: 6 }, ...config } });
    services.push(s);
    return s;
  };
}
