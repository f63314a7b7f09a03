import type { Command } from 'commander';
import type { statusView } from '../../service/status-view.ts';
import { contextOf, output } from '../context.ts';
import { counted, fixed, keyValues, when } from '../format.ts';
import { needsLine } from '../load-needs.ts';

type StatusView = ReturnType<typeof statusView>;

export function addStatusCommand(program: Command): void {
  program
    .command('status')
    .description('node group (desired/actual/ready), GPUs allocated, lent and paid, jobs by state, last tick')
    .action(async (_options: unknown, command: Command) => {
      const context = contextOf(command);
      const { data, text } = await context.client.json<StatusView>(
        'GET',
        '/v1/status',
        undefined,
        undefined,
        ['nodeGroup', 'jobs', 'gpus'],
      );
      output(context, text, () => renderStatus(data));
    });
}

export function renderStatus(s: StatusView): string {
  const group = s.nodeGroup;
  const inFlight = group.updateInFlight ? `; EKS update ${group.updateInFlight} still in progress` : '';
  const resize = group.lastResize
    ? `to ${counted(group.lastResize.target, 'node')}, ${group.lastResize.status}, at ${when(group.lastResize.at)}${inFlight}`
    : 'none yet';
  const jobs = Object.entries(s.jobs)
    .map(([state, count]) => `${count} ${state}`)
    .join(', ');
  return keyValues([
    ['cloud', s.cloud],
    ['nodes', nodesLine(group, s.lastTickAt !== null)],
    ['last resize', resize],
    ...(group.lastRemoval
      ? [
          [
            'last removal',
            `${group.lastRemoval.node} (${group.lastRemoval.reason}), at ${when(group.lastRemoval.at)}`,
          ] as [string, string],
        ]
      : []),
    ...nodeLines(group),
    ['GPUs', gpusLine(s.gpus)],
    ['jobs', jobs],
    ['budget', budgetLine(s.budget)],
    ['plan', s.planId === null ? 'none yet (set a budget)' : `#${s.planId} (boa plan)`],
    ...(s.plannerError ? [['planner error', s.plannerError] as [string, string]] : []),
    // undefined: a service from before it was shown.
    ...(s.executorError
      ? [
          [
            'executor error',
            `failing since ${when(s.executorError.since)}, jobs neither start nor stop: ${s.executorError.message}`,
          ] as [string, string],
        ]
      : []),
    // undefined: a service from before it was shown.
    ...(s.classesLeftOut ? [['classes error', s.classesLeftOut.message] as [string, string]] : []),
    ...plannerBusy(s.plannerComputingSince),
    ['last tick', s.lastTickAt ? `${when(s.lastTickAt)} (${fixed(s.lastTickMs, 1)} ms)` : 'none yet'],
  ]);
}

/** Allocated is the plan's, as the budget books it; GPUs the idle fill lends on top are said apart. */
function gpusLine(g: StatusView['gpus']): string {
  // undefined: a service from before lent GPUs were shown.
  const lent = g.lent > 0 ? `, ${g.lent} lent by the idle fill,` : '';
  return `${g.allocated} allocated${lent} of ${g.paid} paid`;
}

/** A plan computation running for over a minute (they take milliseconds to seconds): said, with since when. */
function plannerBusy(since: string | null | undefined): Array<[string, string]> {
  if (!since || Date.now() - Date.parse(since) < 60_000) return [];
  return [['planner', `computing since ${when(since)}`]];
}

function budgetLine(b: StatusView['budget']): string {
  if (!b) return 'not set (boa budget set <gpuHoursPerHour>)';
  const queued = b.queuedForBudget > 0 ? `; ${counted(b.queuedForBudget, 'job')} queued for the budget` : '';
  const draining = b.draining
    ? '; draining: the running jobs take the budget'
    : b.fillingToBudget
      ? '; filling: the window is under the budget, the running jobs take it'
      : '';
  return (
    // The cheapest plan's spend for the expected arrivals (estimated rates: configured priors blended
    // with submissions) and the jobs waiting, over a budget window: an average, not the GPUs the jobs
    // present want now (a newcomer read 2.4 against 48 GPUs wanted as a contradiction).
    `${b.gpuHoursPerHour} GPU-hours/hour; the expected load (arrivals, jobs waiting) needs at least ` +
    `${needsLine(b.loadNeedsGpuHoursPerHour, b.loadNeedsPaidGpuHoursPerHour)} on average${queued}${draining}`
  );
}

/** What AWS and Kubernetes report that keeps nodes from jobs: not-ready nodes, removals, capacity. */
function nodeLines(group: StatusView['nodeGroup']): Array<[string, string]> {
  const lines: Array<[string, string]> = [];
  const notReady = Object.entries(group.notReady).map(([why, n]) => `${n} ${why}`);
  if (notReady.length > 0) lines.push(['not ready', notReady.join(', ')]);
  for (const old of group.replaced ?? []) {
    lines.push([
      'replaced group',
      `${old.name}: ${counted(old.nodes, 'node')} on their way out (${old.paidGpus} GPUs paid, within the budget)`,
    ]);
  }
  if (group.removing.length > 0) {
    lines.push([
      'removing',
      group.removing.map((r) => `${r.node ?? r.nodeId} (${r.reason}, ${r.state})`).join(', '),
    ]);
  }
  if (group.issues.length > 0) {
    lines.push(['group health', group.issues.map((i) => `${i.code}: ${i.message}`).join('; ')]);
  }
  if (group.waitingReason) lines.push(['jobs wait', group.waitingReason]);
  return lines;
}

function nodesLine(group: StatusView['nodeGroup'], ticked: boolean): string {
  const bounds = ` (group min ${group.minSize ?? '-'}, max ${group.maxSize ?? '-'})`;
  // Null until the pool answers a listing after boa's start: boa changes no job and no node meanwhile.
  if (group.actualNodes === null || group.readyNodes === null) {
    const why = ticked
      ? 'the node pool has not answered since boa started; nothing is resized'
      : 'no tick since boa started';
    return `${group.desiredNodes ?? '-'} desired, not listed yet (${why})${bounds}`;
  }
  // Nodes boa removes are counted apart from the ready ones (undefined: a service from before it said).
  const removing = group.removingNodes ? `, ${group.removingNodes} removing` : '';
  // Read by the tick: a node that came up since reads as booting until the next one.
  return `${group.desiredNodes ?? '-'} desired, ${group.actualNodes} actual, ${group.readyNodes} ready${removing} at the last tick${bounds}`;
}
