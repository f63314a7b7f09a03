import { Counter, Gauge, type Registry } from 'prom-client';
import type { BoaService } from '../service/service.ts';
import type { NodeStatusView } from '../service/nodes/reconciler.ts';

type NodeCounter = keyof NodeStatusView['counters'];

/**
 * The node group's health as boa sees it, the same numbers CloudWatch gets (CapacityBackoff,
 * NodeLaunchFailures, ...: the reconciler's metrics()): launch failures boa backed off for, nodes never
 * ready, the desired size changed outside boa, removals under way. Counters since the process started.
 */
export function nodeGroupMetrics(registry: Registry, service: BoaService): void {
  const view = () => service.state.nodeStatus?.();
  const counter = (name: string, help: string, key: NodeCounter) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(view()?.counters[key] ?? 0);
      },
    });
  counter(
    'boa_node_launch_failures_total',
    "Passes of the capacity backoff that saw a failed launch newer than the last it saw (the log's nodes.capacity): several failed activities between two passes count once, and one of the last 15 minutes counts again after a restart",
    'launchFailures',
  );
  counter(
    'boa_node_provision_timeouts_total',
    'Nodes removed because they were never ready within the provisioning time',
    'provisionTimeouts',
  );
  counter(
    'boa_node_drift_corrections_total',
    "Times the node group's desired size was found changed outside boa and corrected: nodes.drift",
    'driftCorrections',
  );
  counter('boa_node_terminations_total', 'Nodes boa terminated (scale-in, removals)', 'terminations');
  new Gauge({
    name: 'boa_node_capacity_backoff',
    help: 'Whether boa is backing off after launch failures (1) or not (0): it asks for no more nodes meanwhile',
    registers: [registry],
    collect() {
      // The view names no end once the backoff is over.
      this.set(view()?.capacity.backoffUntil != null ? 1 : 0);
    },
  });
  new Gauge({
    name: 'boa_nodes_removing',
    help: 'Removals under way (chosen, cordoned, terminating), CloudWatch\'s NodesRemoving; a node terminated and still listed is in boa_nodes{kind="removing"}',
    registers: [registry],
    collect() {
      // The view names terminated nodes still listed too: CloudWatch counts open removals only.
      this.set(view()?.removing.filter((r) => r.state !== 'terminated').length ?? 0);
    },
  });
}
