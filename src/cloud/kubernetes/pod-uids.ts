import type { V1Pod } from '@kubernetes/client-node';

/**
 * Forgets what is kept of pods no longer listed: the executor's per-pod memories (keyed by uid) are
 * pruned each pass against the pass's listing, so a pod deleted and made again starts afresh.
 */
export function forgetUnlisted(kept: Map<string, unknown> | Set<string>, pods: readonly V1Pod[]): void {
  const listed = new Set(pods.map((p) => p.metadata?.uid));
  for (const uid of kept.keys()) if (!listed.has(uid)) kept.delete(uid);
}
