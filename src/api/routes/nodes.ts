/** GET /v1/nodes: each node of boa's last listing, its state, GPUs and the jobs holding them. */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { nodesView } from '../../service/nodes-view.ts';
import { requireOperator } from '../auth.ts';
import type { ApiEnv } from '../env.ts';
import { NodesView } from '../responses-nodes.ts';
import { errors, jsonContent } from '../schemas.ts';

export function nodeRoutes(app: OpenAPIHono<ApiEnv>) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/nodes',
      operationId: 'listNodes',
      summary: 'The nodes listed at the last tick: state, GPUs, jobs on them, since when paid',
      responses: { 200: jsonContent(NodesView, 'nodes'), ...errors },
    }),
    (c) => {
      requireOperator(c);
      return c.json(nodesView(c.var.service), 200);
    },
  );
}
