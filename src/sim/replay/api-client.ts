/** The slice of the boa API an emulated training job's launcher uses, over any fetch-like function. */
import type { Workload } from '../../service/ports.ts';
export type Fetch = (path: string, init?: RequestInit) => Promise<Response> | Response;

export interface Allocation {
  readonly jobId: number;
  readonly state: string;
  readonly width: number;
  readonly nodes: ReadonlyArray<{ node: string; gpus: number }>;
  readonly generation: number;
}

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

export class LauncherClient {
  constructor(
    private readonly fetch: Fetch,
    private readonly operatorToken: string,
  ) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.fetch(path, {
      method,
      headers: {
        authorization: `Bearer ${this.operatorToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as T & { error?: { message: string; code?: string } };
    if (!res.ok)
      throw new ApiError(
        `${method} ${path}: ${res.status} ${json.error?.message ?? ''}`,
        res.status,
        json.error?.code,
      );
    return json;
  }

  setBudget(gpuHoursPerHour: number) {
    return this.call<{ gpuHoursPerHour: number }>('PUT', '/v1/budget', { gpuHoursPerHour });
  }

  /** With a workload the service's executor runs the job's replicas (the demo's --executor local). */
  register(className: string, name: string, workload?: Workload) {
    return this.call<{ id: number; token: string }>('POST', '/v1/jobs', {
      class: className,
      name,
      ...(workload ? { workload } : {}),
    });
  }

  /**
   * Jobs the service already has, by name: a replay resumed after a crash must not register twice, and
   * a job the service finished after the replay's last snapshot is finished (`finishedAt`, ms).
   */
  async jobsByName(): Promise<Map<string, { id: number; state: string; finishedAt: number | null }>> {
    const out = new Map<string, { id: number; state: string; finishedAt: number | null }>();
    const { jobs } = await this.call<{
      jobs: Array<{ id: number; name: string; state: string; finishedAt: string | null }>;
    }>('GET', '/v1/jobs?limit=10000');
    for (const job of jobs) {
      const finishedAt = job.finishedAt === null ? null : Date.parse(job.finishedAt);
      out.set(job.name, { id: job.id, state: job.state, finishedAt });
    }
    return out;
  }

  allocation(id: number) {
    return this.call<Allocation>('GET', `/v1/jobs/${id}/allocation`);
  }

  progress(id: number, statEpoch: number) {
    return this.call<Allocation>('POST', `/v1/jobs/${id}/progress`, { statEpoch });
  }

  complete(id: number) {
    return this.call<unknown>('POST', `/v1/jobs/${id}/complete`);
  }
}
