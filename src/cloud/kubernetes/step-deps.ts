import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { RetryContext } from '../retry.ts';

/** What a reconcile pass's own steps on the jobs' namespace need (claim rechecks, stuck pods). */
export interface NamespacedStepDeps {
  readonly api: CoreV1Api;
  readonly namespace: string;
  readonly retry: RetryContext;
  readonly logger: Logger;
  readonly now: () => number;
}
