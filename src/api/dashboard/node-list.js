/*
 * The dashboard's list of nodes (GET /v1/nodes), under the nodes' counts: each node of boa's last
 * listing with the cells and words of `boa nodes` (src/cli/commands/nodes.ts): its state, GPUs, those
 * still free, the jobs and stopping replicas holding them, since when launched and paid, and why boa
 * removes it. The counts alone did not say which node was which (found in review).
 */
/* global setHtml, table, escapeHtml, timeHtml, utcTime -- format.js */
/* exported NODES_SHOWN, renderNodeList -- used by parts.js */
'use strict';

/** Nodes listed: a pool of hundreds must not push the jobs out of sight; `boa nodes` lists them all. */
const NODES_SHOWN = 30;

/** GPUs no job, stopping replica or foreign pod holds: what placement could still give there. */
function nodeFree(n) {
  const held = [...n.jobs, ...n.stopping].reduce((sum, j) => sum + j.gpus, 0) + n.foreignGpus;
  return Math.max(0, n.gpus - held);
}

/** `job:GPUs` pairs as `boa nodes` writes them, `, ` apart here so a long cell wraps (the CLI's has no space for awk). */
function nodeJobs(n) {
  const cells = [
    ...n.jobs.map((j) => `${j.id}:${j.gpus}`),
    ...n.stopping.map((s) => `${s.jobId}:${s.gpus}(stopping)`),
  ];
  return cells.length > 0 ? cells.join(', ') : '-';
}

/** Why boa removes it, how far along and since when, its replaced group, foreign pods: `boa nodes`'s note. */
function nodeNote(n) {
  const parts = [];
  if (n.removing)
    parts.push(`${n.removing.reason}, ${n.removing.state} (since ${utcTime(n.removing.since)})`);
  if (n.replacedGroup) parts.push(`replaced group ${n.replacedGroup}`);
  if (n.foreignGpus > 0) parts.push(`${n.foreignGpus} GPUs held by pods not boa's`);
  return parts.length > 0 ? parts.join('; ') : '-';
}

/** GET /v1/nodes's body drawn in #node-list. */
function renderNodeList(view) {
  // Null until the pool answers a listing after boa's start: said as `boa nodes` says it, not "no nodes".
  if (view.nodes === null) {
    const why =
      view.lastTickAt === null
        ? 'no tick since boa started'
        : 'the node pool has not answered since boa started; nothing is resized';
    setHtml('node-list', `<p>not listed yet (${escapeHtml(why)})</p>`);
    return;
  }
  if (view.nodes.length === 0) {
    setHtml('node-list', '<p>no nodes</p>');
    return;
  }
  const shown = view.nodes.slice(0, NODES_SHOWN);
  const rows = shown.map((n) => [
    escapeHtml(n.name ?? n.id),
    escapeHtml(n.id),
    escapeHtml(n.state),
    n.gpus,
    nodeFree(n),
    escapeHtml(nodeJobs(n)),
    timeHtml(n.launchedAt),
    n.paidSince === null ? '-' : timeHtml(n.paidSince),
    escapeHtml(nodeNote(n)),
  ]);
  const more =
    view.nodes.length > shown.length
      ? `<p class="shown">Shown: the first ${shown.length} of ${view.nodes.length} nodes (all: <code>boa nodes</code>).</p>`
      : '';
  const caption = `each node at the last tick${view.lastTickAt ? `, ${utcTime(view.lastTickAt)}` : ''}`;
  setHtml(
    'node-list',
    `${table(['node', 'instance', 'state', 'GPUs', 'free', 'jobs', 'launched', 'paid', 'note'], rows, caption)}${more}`,
  );
}
