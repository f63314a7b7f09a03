import { createHash } from 'node:crypto';

export interface ResizeIntent {
  readonly clusterName: string;
  readonly nodegroupName: string;
  readonly desiredSize: number;
  /**
   * Which state of the node group the resize starts from: its modifiedAt and desired size as
   * DescribeNodegroup reported them. A retry of the same call (after a timeout, say) starts from the
   * same state and so sends the same token, which EKS answers with the first request's update instead
   * of applying it twice; a later resize to the same size starts from a newer state and gets a new token.
   * The state lives in EKS, so a restarted service cannot reuse an old token by accident.
   */
  readonly generation: string;
}

/** A deterministic clientRequestToken for UpdateNodegroupConfig: short, ASCII, case-sensitive. */
export function idempotencyToken(intent: ResizeIntent): string {
  const key = [intent.clusterName, intent.nodegroupName, intent.desiredSize, intent.generation].join('\n');
  return `boa-${createHash('sha256').update(key).digest('hex').slice(0, 40)}`;
}
