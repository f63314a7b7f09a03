/**
 * The response schemas of /openapi.json (src/api/responses.ts) describe what the service really
 * answers: real responses parse, and none has a field the document does not declare.
 */
import type { z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import * as views from '../../src/api/responses.ts';
import { startService } from '../service/harness.ts';

/** Fields of `value` that `schema` does not declare, as dotted paths (objects only, one level deep). */
function undeclared(schema: z.ZodType, value: unknown, path = ''): string[] {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape || typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  if (Object.keys(shape).length === 0) return []; // an open object: described, fields not listed
  return Object.entries(value).flatMap(([key, v]) => {
    if (!(key in shape)) return [`${path}${key}`];
    let inner = shape[key] as unknown as { unwrap?: () => z.ZodType; shape?: unknown };
    while (!inner.shape && inner.unwrap) inner = inner.unwrap() as never;
    return inner.shape ? undeclared(inner as never, v, `${path}${key}.`) : [];
  });
}

function conforms(schema: z.ZodType, body: unknown) {
  const parsed = schema.safeParse(body);
  expect(parsed.success, JSON.stringify(parsed.error?.issues?.slice(0, 3))).toBe(true);
  expect(undeclared(schema, body)).toEqual([]);
}

describe('response bodies match the OpenAPI schemas', () => {
  it('for every operator and job route a first run touches', async () => {
    const s = await startService({ config: { priorRates: { cifar10: 4 } } });
    try {
      conforms(views.BudgetView, (await s.request('GET', '/v1/budget')).body);
      conforms(views.BudgetSetView, (await s.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 })).body);
      conforms(views.BudgetView, (await s.request('GET', '/v1/budget')).body);
      const registered = (await s.request('POST', '/v1/jobs', { class: 'cifar10', name: 'first' })).body;
      conforms(views.RegisteredJobView, registered);
      // Always answered (null when none): required, so a client's type is not `string | null | undefined`.
      // Without a workload the job is self-launched: said (the API took it in silence, the CLI asks for
      // --self-launched), not refused (the workload is documented as optional).
      expect(registered.warning).toMatch(
        /^no workload: the job is self-launched\. boa starts nothing for it but gives it GPUs \(paid\) from the next tick; .* unpolled for 600 s \(leaseSeconds\) the job is lost .*register it with a workload$/,
      );
      const doc = (await s.request('GET', '/openapi.json')).body;
      expect(doc.components.schemas.RegisteredJob.required).toContain('warning');
      await s.ticks(3);
      const job = (path: string, body?: unknown) =>
        s.request(body === undefined ? 'GET' : 'POST', path, body, registered.token);
      conforms(views.AllocationView, (await job(`/v1/jobs/${registered.id}/allocation`)).body);
      conforms(
        views.AllocationView,
        (await job(`/v1/jobs/${registered.id}/progress`, { statEpoch: 1 })).body,
      );
      conforms(views.JobView, (await s.request('GET', `/v1/jobs/${registered.id}`)).body);
      conforms(views.JobListView, (await s.request('GET', '/v1/jobs')).body);
      conforms(views.PlanView, (await s.request('GET', '/v1/plan')).body);
      conforms(views.PlanView, (await s.request('POST', '/v1/plan/recompute')).body);
      conforms(views.FrontierView, (await s.request('GET', '/v1/frontier')).body);
      conforms(views.StatusView, (await s.request('GET', '/v1/status')).body);
      const classes = (await s.request('GET', '/v1/classes')).body;
      conforms(views.ClassListView, classes);
      const profile = classes.classes[0].profile;
      conforms(views.ClassValidView, (await s.request('POST', '/v1/classes/validate', { profile })).body);
      conforms(
        views.ClassSavedView,
        (await s.request('PUT', `/v1/classes/${profile.name}`, { profile })).body,
      );
      conforms(views.JobView, (await s.request('POST', `/v1/jobs/${registered.id}/complete`)).body);
      const arrivals = [{ className: 'cifar10', submittedAt: s.service.state.startedAt - 3_600_000 }];
      conforms(views.HistoryImportedView, (await s.request('POST', '/v1/history', { arrivals })).body);
      conforms(views.HistoryView, (await s.request('GET', '/v1/history')).body);
      conforms(views.HistoryArrivalsView, (await s.request('GET', '/v1/history/arrivals')).body);
      conforms(views.HistoryDeletedView, (await s.request('DELETE', '/v1/history/1')).body);
    } finally {
      await s.close();
    }
  });
});
