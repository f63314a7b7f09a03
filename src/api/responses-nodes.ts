/** GET /v1/nodes's body, as src/service/nodes-view.ts builds it. */
import { z } from '@hono/zod-openapi';
import { time } from './response-parts.ts';

const NodeJob = z.object({
  id: z.number().int(),
  name: z.string().nullable(),
  gpus: z.number().int().openapi({ description: "of the node's GPUs, those the job runs on" }),
});

const NodeStopping = z.object({
  jobId: z.number().int(),
  replicas: z.number().int(),
  gpus: z.number().int().openapi({
    description: 'GPUs its replicas boa stops still hold there (placement gives them to no one meanwhile)',
  }),
});

const NodeRow = z
  .object({
    id: z.string().openapi({ description: "the pool's id (on EKS the EC2 instance id)" }),
    name: z.string().nullable().openapi({
      description:
        'the name jobs are placed by (on EKS the Kubernetes node name, once registered); null: its id',
    }),
    state: z.string().openapi({
      description:
        "as GET /v1/status counts it: removing (boa removes it: see removing), ready, or why it is not: booting, registering, not-ready, no-gpus, cordoned (by someone else), leaving (on its way out, not boa's removal: e.g. a replaced group's)",
    }),
    removing: z
      .object({
        reason: z
          .string()
          .openapi({ description: 'why boa removes it: scale-in, provision-timeout, over-ceiling' }),
        state: z.string().openapi({
          description:
            'how far along: chosen, cordoning, cordoned, terminating, terminated (and still listed)',
        }),
        since: time(),
      })
      .nullable(),
    replacedGroup: z.string().nullable().openapi({
      description: 'the replaced node group it belongs to (an instance-type change): paid until it is gone',
    }),
    gpus: z.number().int(),
    foreignGpus: z
      .number()
      .int()
      .openapi({ description: "GPUs pods boa did not create hold there (EKS): not boa's to place" }),
    jobs: z.array(NodeJob).openapi({ description: 'jobs placed on it, by id' }),
    stopping: z.array(NodeStopping).openapi({
      description:
        'replicas boa stops that still run there, by job, and those of stops no executor answer has listed yet (one per node the generation had): their GPUs go to no placement meanwhile',
    }),
    launchedAt: time(),
    paidSince: time().nullable().openapi({
      description:
        "the ledger's open row for it: paid from there until a listing no longer has it; null: not billed (EC2 pending) or not yet booked",
    }),
  })
  .openapi('Node');

export const NodesView = z
  .object({
    nodes: z.array(NodeRow).nullable().openapi({
      description:
        "the nodes boa's last listing has (each tick lists them); null: the pool has not answered a listing since boa started (it then changes no job and no node)",
    }),
    lastTickAt: time().nullable(),
  })
  .openapi('Nodes');
