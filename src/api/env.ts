import type { Scheduler } from '../service/scheduler.ts';
import type { BoaService } from '../service/service.ts';

/** What every handler can reach: the service, its scheduler, and whether the caller is the operator. */
export type ApiEnv = {
  Variables: { operator: boolean; service: BoaService; scheduler: Scheduler };
};
