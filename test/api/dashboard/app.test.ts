/**
 * The dashboard's script in node (load-app.ts): the charts' specs rendered with the real vega, the
 * numbers and tables as HTML, what the API's answers turn into. The whole page: ../dashboard.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../../service/harness.ts';
import { loadDashboardScript, renderSpec } from './load-app.ts';

type Service = Awaited<ReturnType<typeof startService>>;
const services: Service[] = [];
async function service(config: Record<string, unknown> = {}) {
  const s = await startService({ config: { priorRates: { cifar10: 6 }, ...config } });
  services.push(s);
  return s;
}
afterEach(async () => {
  for (const s of services.splice(0)) await s.close();
});

const svgSize = (svg: string) => {
  const [, width, height] = /<svg[^>]* width="([^"]+)" height="([^"]+)"/.exec(svg)!;
  return { width: Number(width), height: Number(height) };
};

describe('the spend chart', () => {
  it('has a sane size with no ledger points yet (a service that just started)', async () => {
    const s = await service();
    const dash = loadDashboardScript();
    for (const budget of [null, 40]) {
      if (budget !== null) await s.request('PUT', '/v1/budget', { gpuHoursPerHour: budget });
      const ledger = (await s.request('GET', '/v1/ledger?hours=24&points=96')).body;
      expect(ledger.series).toEqual([]);
      const size = svgSize(await renderSpec(dash.spendSpec(ledger, budget)));
      // The page sets height 260 and the container's width: legend and axes add a little.
      expect(size.height).toBeGreaterThan(260);
      expect(size.height).toBeLessThan(400);
      expect(size.width).toBeLessThan(800);
    }
  });
});
