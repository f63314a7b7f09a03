import type { Clock } from '../../src/service/ports.ts';

/**
 * The Auto Scaling group under an emulated EKS managed node group: launches, the default termination
 * policy, explicit termination, scale-in protection, launch failures, suspended processes and AZ
 * rebalancing, as AWS documents them
 * (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-termination-policies.html).
 * Everything time-dependent derives from the clock; `step()` applies what the ASG would have done by now.
 */

export const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'] as const;

export interface EmulatedInstance {
  readonly id: string;
  readonly zone: string;
  readonly launchedAt: number;
  /** The launch template version it was launched from (the default policy removes old ones first). */
  readonly templateVersion: number;
  protectedFromScaleIn: boolean;
  /** When scale-in or TerminateInstanceInAutoScalingGroup took it: shutting-down, then gone. */
  terminatedAt?: number;
  /**
   * Why it went: 'scale-in' (the ASG's own choice), 'api' (TerminateInstanceInAutoScalingGroup) or
   * 'replacement' (the ASG replacing it on its own: a failed health check) or 'rebalance' (AZRebalance
   * evening out the zones).
   */
  terminatedBy?: 'scale-in' | 'api' | 'replacement' | 'rebalance';
  /** EKS's termination lifecycle hook holds it in Terminating:Wait, EC2 still running, until then. */
  hookUntil?: number;
  /** EnterStandby: out of service and not counted toward the desired capacity, still running. */
  standby?: boolean;
}

export interface ScalingActivity {
  readonly id: string;
  readonly at: number;
  readonly status: 'Successful' | 'Failed';
  readonly description: string;
  readonly message?: string;
}

export class AsgError extends Error {
  constructor(
    override readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

const ICE_MESSAGE =
  'Could not launch On-Demand Instances. InsufficientInstanceCapacity - We currently do not have ' +
  'sufficient g4dn.12xlarge capacity in the Availability Zone you requested. Launching EC2 instance failed.';

export class EmulatedAsg {
  readonly instances: EmulatedInstance[] = [];
  readonly activities: ScalingActivity[] = [];
  /** Instances the ASG could still launch (EC2 capacity); Infinity = no limit. */
  capacity = Number.POSITIVE_INFINITY;
  templateVersion = 1;
  /** SuspendProcesses / ResumeProcesses: process names suspended (none at creation, as EKS leaves it). */
  readonly suspendedProcesses = new Set<string>();
  /** Instances AZRebalance launched beyond the desired capacity: nobody asked for them. */
  readonly rebalanceLaunches: string[] = [];
  private nextInstance = 1;
  private lastFailureAt = Number.NEGATIVE_INFINITY;
  /** A decrementing TerminateInstanceInAutoScalingGroup left the zones as they are: rebalance next step. */
  private unbalancedByApi = false;

  constructor(
    readonly name: string,
    private readonly clock: Clock,
    public minSize: number,
    public maxSize: number,
    public desiredCapacity: number,
    private readonly options: {
      readonly shutdownMs: number;
      readonly idPrefix?: string;
      /** The zones of its subnets (default ZONES). */
      readonly zones?: readonly string[];
      /** How long EKS's lifecycle hook drains an instance AZRebalance terminates (default 0). */
      readonly rebalanceHookMs?: number;
    },
  ) {}

  private get zones(): readonly string[] {
    return this.options.zones ?? ZONES;
  }

  /** Instances in service or launching (not terminating): what counts against the desired capacity. */
  live(): EmulatedInstance[] {
    return this.instances.filter((i) => i.terminatedAt === undefined && !i.standby);
  }

  /** EnterStandby by hand; with `decrement` the desired capacity goes down with it, else a replacement. */
  enterStandby(instanceId: string, decrement: boolean): void {
    const instance = this.live().find((i) => i.id === instanceId);
    if (!instance) throw new Error(`no live instance ${instanceId}`);
    instance.standby = true;
    if (decrement) this.desiredCapacity -= 1;
    this.step();
  }

  /** Launches up to the desired capacity (as capacity allows) and terminates down to it. */
  step(launchedAt = this.clock.now()): void {
    const now = this.clock.now();
    let live = this.live();
    while (live.length < this.desiredCapacity) {
      if (this.launchedSince() >= this.capacity) {
        // The ASG retries on its own; one failed activity a minute is what the console shows.
        if (now - this.lastFailureAt >= 60_000) {
          this.lastFailureAt = now;
          this.activity(
            'Failed',
            'Launching a new EC2 instance.  Status Reason: ' + ICE_MESSAGE,
            ICE_MESSAGE,
          );
        }
        break;
      }
      this.launch(this.leastLoadedZone(live), launchedAt);
      live = this.live();
    }
    while (live.length > this.desiredCapacity) {
      const victim = this.defaultPolicyVictim(live);
      if (!victim) break; // every instance protected: desired drops, nothing is terminated
      this.terminate(victim, 'scale-in');
      // AWS records every termination, its own scale-in too (boa's unseen-nodes.ts reads when it ended).
      this.activity(
        'Successful',
        `Terminating EC2 instance: ${victim.id} (an instance was taken out of service in response to a ` +
          `difference between desired and actual capacity, shrinking the capacity from ${live.length} to ` +
          `${live.length - 1})`,
      );
      live = this.live();
    }
    if (this.unbalancedByApi) this.rebalance();
  }

  /**
   * AZRebalance after TerminateInstanceInAutoScalingGroup with decrement left the zones uneven (AWS's
   * reference for that call warns of it): it launches in the zone with the fewest instances first, up to
   * 10% or one instance above maxSize, then terminates one in the zone with the most by the default
   * policy, busy or not. Nothing while the process is suspended (nor while Launch or Terminate is).
   */
  private rebalance(): void {
    this.unbalancedByApi = false;
    const off = ['AZRebalance', 'Launch', 'Terminate'].some((p) => this.suspendedProcesses.has(p));
    if (off) return;
    const ceiling = this.maxSize + Math.max(1, Math.ceil(this.maxSize * 0.1));
    for (;;) {
      const live = this.live();
      const count = (zone: string) => live.filter((i) => i.zone === zone).length;
      const sorted = [...this.zones].sort((a, b) => count(a) - count(b));
      const fewest = sorted[0] as string;
      const most = sorted.at(-1) as string;
      if (count(most) - count(fewest) <= 1 || live.length >= ceiling) return;
      const launched = this.launch(fewest, this.clock.now());
      this.rebalanceLaunches.push(launched.id);
      const victim = this.defaultPolicyVictim(live.filter((i) => i.zone === most));
      if (!victim) return;
      this.terminate(victim, 'rebalance');
      victim.hookUntil = this.clock.now() + (this.options.rebalanceHookMs ?? 0);
      this.activity(
        'Successful',
        `Terminating EC2 instance: ${victim.id} (an instance was taken out of service in response to an ` +
          'Availability Zone rebalancing)',
      );
    }
  }

  private launch(zone: string, launchedAt: number): EmulatedInstance {
    const prefix = this.options.idPrefix ?? '';
    const instance: EmulatedInstance = {
      id: `i-${prefix}${String(this.nextInstance++).padStart(17 - prefix.length, '0')}`,
      zone,
      launchedAt,
      templateVersion: this.templateVersion,
      protectedFromScaleIn: false,
    };
    this.instances.push(instance);
    this.activity('Successful', `Launching a new EC2 instance: ${instance.id}`);
    return instance;
  }

  /** SuspendProcesses (all of them when none is named). */
  suspend(processes: readonly string[] | undefined): void {
    const all = ['Launch', 'Terminate', 'AddToLoadBalancer', 'AlarmNotification', 'AZRebalance'];
    for (const p of processes ?? [
      ...all,
      'HealthCheck',
      'InstanceRefresh',
      'ReplaceUnhealthy',
      'ScheduledActions',
    ])
      this.suspendedProcesses.add(p);
  }

  /** ResumeProcesses (all of them when none is named). */
  resume(processes: readonly string[] | undefined): void {
    if (processes === undefined) this.suspendedProcesses.clear();
    else for (const p of processes) this.suspendedProcesses.delete(p);
  }

  /**
   * The default termination policy: the zone with the most instances that has an unprotected one, then
   * the oldest launch template, then the instance closest to the next billing hour, then any.
   */
  defaultPolicyVictim(live: readonly EmulatedInstance[]): EmulatedInstance | undefined {
    const candidates = live.filter((i) => !i.protectedFromScaleIn);
    if (candidates.length === 0) return undefined;
    const perZone = new Map<string, number>();
    for (const i of live) perZone.set(i.zone, (perZone.get(i.zone) ?? 0) + 1);
    const most = Math.max(...candidates.map((i) => perZone.get(i.zone) ?? 0));
    let pool = candidates.filter((i) => perZone.get(i.zone) === most);
    const oldest = Math.min(...pool.map((i) => i.templateVersion));
    pool = pool.filter((i) => i.templateVersion === oldest);
    const now = this.clock.now();
    const toNextHour = (i: EmulatedInstance) => 3_600_000 - ((now - i.launchedAt) % 3_600_000);
    pool.sort((a, b) => toNextHour(a) - toNextHour(b) || a.id.localeCompare(b.id));
    return pool[0];
  }

  /** TerminateInstanceInAutoScalingGroup. */
  terminateInstance(instanceId: string, decrement: boolean): ScalingActivity {
    // One in Standby is the group's too: taken to be terminated as one in service, with the decrement
    // (the worst case for boa; the API reference says nothing of Standby here).
    const instance = this.instances.find((i) => i.id === instanceId && i.terminatedAt === undefined);
    if (!instance) {
      throw new AsgError(
        'ValidationError',
        `Instance Id not found - No managed instance found for instance ID: ${instanceId}`,
      );
    }
    if (decrement && this.desiredCapacity - 1 < this.minSize) {
      throw new AsgError(
        'ValidationError',
        `Currently, desiredCapacity=${this.desiredCapacity} and minSize=${this.minSize}, terminating ` +
          `instance without replacement will violate group's min size constraint. Either set ` +
          `shouldDecrementDesiredCapacity flag to false or lower group's min size.`,
      );
    }
    if (decrement) this.desiredCapacity -= 1;
    this.terminate(instance, 'api');
    // Without decrement the replacement goes to the zone short of one; with it, nothing evens them out.
    if (decrement) this.unbalancedByApi = true;
    const cause = decrement
      ? 'shrinking the capacity from ' + (this.desiredCapacity + 1) + ' to ' + this.desiredCapacity
      : 'a replacement will be launched';
    return this.activity('Successful', `Terminating EC2 instance: ${instanceId} (${cause})`);
  }

  /**
   * The ASG replaces an instance on its own (a failed EC2 health check, AZ rebalancing): the desired
   * capacity stays, a replacement is launched at the next step, and EKS's lifecycle hook holds the old
   * one in Terminating:Wait, EC2 running and paid, for `hookMs` while its Node is drained.
   */
  replaceInstance(instanceId: string, hookMs: number): void {
    const instance = this.live().find((i) => i.id === instanceId);
    if (!instance) throw new Error(`no live instance ${instanceId}`);
    this.terminate(instance, 'replacement');
    instance.hookUntil = this.clock.now() + hookMs;
    this.activity(
      'Successful',
      `Terminating EC2 instance: ${instanceId} (an instance was taken out of service in response to an EC2 health check)`,
    );
  }

  /** Terminating:Wait (the hook holds it), Terminating:Proceed (shutting down), or undefined: not leaving. */
  leavingState(instance: EmulatedInstance): string | undefined {
    if (instance.terminatedAt === undefined) return undefined;
    return instance.hookUntil !== undefined && this.clock.now() < instance.hookUntil
      ? 'Terminating:Wait'
      : 'Terminating:Proceed';
  }

  /** SetInstanceProtection. */
  setProtection(instanceIds: readonly string[], protect: boolean): void {
    for (const id of instanceIds) {
      const instance = this.live().find((i) => i.id === id);
      if (!instance) {
        throw new AsgError(
          'ValidationError',
          `The instance ${id} is not part of Auto Scaling group ${this.name}.`,
        );
      }
      instance.protectedFromScaleIn = protect;
    }
  }

  /**
   * EC2's view: pending until bootMs after launch; after termination running while a lifecycle hook holds
   * it, then shutting-down a while, then gone.
   */
  ec2State(
    instance: EmulatedInstance,
    bootMs: number,
  ): 'pending' | 'running' | 'shutting-down' | 'terminated' {
    const now = this.clock.now();
    if (instance.terminatedAt !== undefined) {
      const hookEnd = instance.hookUntil ?? instance.terminatedAt;
      if (now < hookEnd) return 'running';
      return now < hookEnd + this.options.shutdownMs ? 'shutting-down' : 'terminated';
    }
    return now < instance.launchedAt + bootMs ? 'pending' : 'running';
  }

  /** Failed launches in the last `withinMs` (what EKS turns into a health issue). */
  recentFailures(withinMs: number): ScalingActivity[] {
    const since = this.clock.now() - withinMs;
    return this.activities.filter((a) => a.status === 'Failed' && a.at >= since);
  }

  private launchedSince(): number {
    return this.live().length;
  }

  private terminate(instance: EmulatedInstance, by: NonNullable<EmulatedInstance['terminatedBy']>): void {
    instance.terminatedAt = this.clock.now();
    instance.terminatedBy = by;
    instance.protectedFromScaleIn = false;
  }

  private leastLoadedZone(live: readonly EmulatedInstance[]): string {
    const count = (zone: string) => live.filter((i) => i.zone === zone).length;
    return [...this.zones].sort((a, b) => count(a) - count(b))[0] as string;
  }

  private activity(status: ScalingActivity['status'], description: string, message?: string) {
    const activity: ScalingActivity = {
      id: `activity-${this.activities.length + 1}`,
      at: this.clock.now(),
      status,
      description,
      ...(message ? { message } : {}),
    };
    this.activities.push(activity);
    return activity;
  }
}
