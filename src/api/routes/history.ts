import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { HistoryImportRow } from '../../store/history.ts';
import { requireOperator } from '../auth.ts';
import type { ApiEnv } from '../env.ts';
import { HistoryArrivalsView, HistoryDeletedView, HistoryImportedView, HistoryView } from '../responses.ts';
import { historyReachMs } from '../../service/history.ts';
import { bodyErrors, ErrorSchema, errors, HistoryBody, jsonContent, pathId } from '../schemas.ts';

const ImportIdParam = z.object({ id: pathId(1) });

const iso = (ms: number) => new Date(ms).toISOString();

function importView(row: HistoryImportRow) {
  return {
    id: row.id,
    source: row.source,
    observedFrom: iso(row.observedFrom),
    firstArrivalAt: iso(row.firstArrivalAt),
    lastArrivalAt: iso(row.lastArrivalAt),
    arrivals: row.arrivals,
    importedAt: iso(row.importedAt),
  };
}

/** Arrival history for the rate estimator (src/service/history.ts). */
export function historyRoutes(app: OpenAPIHono<ApiEnv>) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/history',
      operationId: 'importHistory',
      summary:
        "Import submissions from before the service's record (a past job log) so the rate estimator " +
        'starts from them; never run; the same content twice is one import',
      request: { body: { content: { 'application/json': { schema: HistoryBody } }, required: true } },
      responses: {
        200: jsonContent(HistoryImportedView, 'imported (or imported before: alreadyImported)'),
        ...bodyErrors,
        409: jsonContent(ErrorSchema, "its span overlaps an import's: its arrivals would count twice"),
        422: jsonContent(
          ErrorSchema,
          'an unknown class, an arrival not before the record, or none recent enough',
        ),
      },
    }),
    (c) => {
      requireOperator(c);
      const body = c.req.valid('json');
      const result = c.var.service.importHistory({
        source: body.source ?? 'unnamed',
        arrivals: body.arrivals,
        ...(body.observedFrom !== undefined ? { observedFrom: body.observedFrom } : {}),
      });
      return c.json({ ...result, import: importView(result.import) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/history',
      operationId: 'listHistory',
      summary: 'Imported arrival histories, and where the rate estimator starts observing',
      responses: { 200: jsonContent(HistoryView, 'history'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      const { state, deps } = c.var.service;
      return c.json(
        {
          recordStartedAt: iso(state.startedAt),
          observedSince: iso(state.ratesObservedSince),
          imports: deps.repo.history.imports().map(importView),
        },
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/history/arrivals',
      operationId: 'listHistoryArrivals',
      summary:
        "Every submission the rate estimator reads, the jobs' and imported ones, oldest first: what " +
        "another boa service imports to start from this one's days (boa history export)",
      responses: { 200: jsonContent(HistoryArrivalsView, 'arrivals'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      const { deps } = c.var.service;
      const since = deps.clock.now() - historyReachMs(deps.config);
      const arrivals = deps.repo
        .submissionsSince(since)
        .sort((a, b) => a.submittedAt - b.submittedAt)
        .map((a) => ({ className: a.className, submittedAt: iso(a.submittedAt) }));
      return c.json({ since: iso(since), arrivals }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/v1/history/{id}',
      operationId: 'deleteHistory',
      summary: 'Delete an imported history: the rate estimator no longer reads it',
      request: { params: ImportIdParam },
      responses: {
        200: jsonContent(HistoryDeletedView, 'deleted'),
        ...errors,
        404: jsonContent(ErrorSchema, 'no such import'),
      },
    }),
    (c) => {
      requireOperator(c);
      const row = c.var.service.deleteHistory(c.req.valid('param').id);
      return c.json({ deleted: importView(row) }, 200);
    },
  );
}
