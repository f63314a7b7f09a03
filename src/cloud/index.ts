/**
 * The cloud adapters behind the service's ports (src/service/ports.ts): the local emulated node pool and
 * the log metrics sink here; the AWS ones (EKS, EC2, CloudWatch) in ./aws/index.ts, imported on their own
 * so the local default never loads the AWS SDK.
 */
export { checkTarget, clampToBounds, type SizeBounds } from './bounds.ts';
export { CloudError } from './errors.ts';
export { LocalNodePool, type LocalPoolOptions } from './local/local-node-pool.ts';
export { type LocalPoolConfig, LocalPoolError, type LocalPoolSnapshot } from './local/local-pool-state.ts';
export { LogMetricsSink } from './log-sink.ts';
export { realSleep, type Sleep, systemClock } from './time.ts';
