import type { Command } from 'commander';
import type { nodesView } from '../../service/nodes-view.ts';
import { contextOf, output } from '../context.ts';
import { table, when } from '../format.ts';

type NodesView = ReturnType<typeof nodesView>;
type NodeRow = NonNullable<NodesView['nodes']>[number];

export function addNodesCommand(program: Command): void {
  program
    .command('nodes')
    .description('the nodes listed at the last tick: state, GPUs, the jobs on them, since when paid')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<NodesView>('GET', '/v1/nodes', undefined, undefined, [
        'nodes',
      ]);
      output(context, text, () => renderNodes(data));
    });
}

export function renderNodes(view: NodesView): string {
  // Null until the pool answers a listing after boa's start, as `boa status` says it.
  if (view.nodes === null) {
    const why =
      view.lastTickAt === null
        ? 'no tick since boa started'
        : 'the node pool has not answered since boa started; nothing is resized';
    return `not listed yet (${why})\n`;
  }
  if (view.nodes.length === 0) return 'no nodes\n';
  return table(
    ['node', 'instance', 'state', 'GPUs', 'free', 'jobs', 'launched', 'paid', 'note'],
    view.nodes.map((n) => [
      n.name ?? n.id,
      n.id,
      n.state,
      n.gpus,
      free(n),
      jobsCell(n),
      when(n.launchedAt),
      when(n.paidSince),
      note(n),
    ]),
  );
}

/** GPUs no job, stopping replica or foreign pod holds: what placement could still give there. */
function free(n: NodeRow): number {
  const held = [...n.jobs, ...n.stopping].reduce((sum, j) => sum + j.gpus, 0) + n.foreignGpus;
  return Math.max(0, n.gpus - held);
}

/** `job:GPUs` pairs, without spaces so the table splits on whitespace (awk). */
function jobsCell(n: NodeRow): string | null {
  const cells = [
    ...n.jobs.map((j) => `${j.id}:${j.gpus}`),
    ...n.stopping.map((s) => `${s.jobId}:${s.gpus}(stopping)`),
  ];
  return cells.length > 0 ? cells.join(',') : null;
}

/** Why it is removed (the words of `boa status`'s removing line), its replaced group, foreign pods. */
function note(n: NodeRow): string | null {
  const parts: string[] = [];
  if (n.removing) parts.push(`${n.removing.reason}, ${n.removing.state} (since ${when(n.removing.since)})`);
  if (n.replacedGroup) parts.push(`replaced group ${n.replacedGroup}`);
  if (n.foreignGpus > 0) parts.push(`${n.foreignGpus} GPUs held by pods not boa's`);
  return parts.length > 0 ? parts.join('; ') : null;
}
