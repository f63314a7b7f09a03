import type { Logger } from 'pino';
import { instanceTypeFacts } from '../../core/instance-types.ts';
import type { PoolNode } from '../../service/ports.ts';
import type { ListedInstance } from './ec2-nodes.ts';
import { plain } from './replaced-nodegroups.ts';

/** The issue describe() adds to the group's while its type disagrees with boa's (on /v1/status). */
export const TYPE_MISMATCH_ISSUE = 'BoaInstanceTypeMismatch';

/**
 * The node group's instance types against the one boa is configured with (BOA_INSTANCE_TYPE, its
 * gpusPerNode). Each listed instance counts at its own type's GPUs: the ledger charges what EC2 bills
 * (before, every node counted the configured GPUs: 1 GPU charged for a 4-GPU g4dn.12xlarge when the
 * configuration said g4dn.xlarge). A type boa does not know counts as the configured one, said once.
 *
 * A group whose types (DescribeNodegroup's instanceTypes, or its instances as EC2 lists them) have
 * another GPU count than the configured one refuses raises until the two agree; lowering stays allowed.
 * Sizing by the real GPUs instead was rejected: widths, the whole-node rounding, the budget floor,
 * maxNodes and the spend ceiling's node count all take nodes of gpusPerNode, so a group of another
 * count is sized wrong everywhere (4 times the budget's GPUs for 4-GPU nodes counted as 1-GPU ones),
 * and the fix is one setting the operator must choose (the type paid for). Names that differ at the
 * same GPU count (g4dn.xlarge and g4dn.2xlarge) only warn: the GPU budget holds, the price differs.
 */
export class InstanceTypeCheck {
  /** From the last DescribeNodegroup (undefined: it named none, e.g. a launch template sets the type). */
  private groupTypes: readonly string[] = [];
  /** The types of the group's own instances in the last listing with another GPU count. */
  private listedOff: readonly string[] = [];
  /** The types of the group's own instances in the last listing. */
  private listedTypes: readonly string[] = [];
  private readonly unknown = new Set<string>();
  private said: string | undefined;
  private namesSaid = '';

  constructor(
    private readonly logger: Logger,
    private readonly gpusPerNode: number,
    private readonly instanceType: string | undefined,
  ) {}

  /** The group's instance types as DescribeNodegroup gives them. */
  group(instanceTypes: readonly string[]): void {
    this.groupTypes = instanceTypes;
    const other = instanceTypes.filter((t) => this.instanceType !== undefined && t !== this.instanceType);
    const names = other.join(',');
    if (other.length > 0 && names !== this.namesSaid && this.offTypes(other).length === 0) {
      this.logger.warn(
        { event: 'nodegroup.type-differs', instanceTypes, configured: this.instanceType },
        `the node group launches ${names}, boa is configured with ${this.instanceType} (BOA_INSTANCE_TYPE): ` +
          "the same GPUs per node, so the budget holds; set BOA_INSTANCE_TYPE to the group's type for its price",
      );
    }
    this.namesSaid = names;
    this.report();
  }

  /**
   * A listed instance of the group as a node at its own type's GPUs; the group's instances of another
   * GPU count are noted (listed() ends a listing).
   */
  node(instance: ListedInstance): PoolNode {
    const gpus = instance.instanceType ? instanceTypeFacts(instance.instanceType)?.gpus : undefined;
    if (gpus === undefined) {
      const type = instance.instanceType ?? '(none named)';
      if (!this.unknown.has(type)) {
        this.unknown.add(type);
        this.logger.warn(
          { event: 'node.type-unknown', instanceType: type, gpusPerNode: this.gpusPerNode },
          `instance type ${type} is not one boa knows the GPUs of (src/core/instance-types.ts): its nodes ` +
            `count as ${this.gpusPerNode} GPUs each (the configured type's)`,
        );
      }
    }
    return { ...plain(instance), gpus: gpus ?? this.gpusPerNode };
  }

  /** The group's own instances of one listing (not a replaced group's). */
  listed(instances: readonly ListedInstance[]): void {
    this.listedTypes = [...new Set(instances.flatMap((i) => (i.instanceType ? [i.instanceType] : [])))];
    this.listedOff = this.offTypes(this.listedTypes);
    this.report();
  }

  /**
   * The GPUs of an instance no listing showed (launched and gone between two: unseen-nodes.ts): the most
   * of the group's types' (the ones it names, and its instances' at the last listing), so the ledger
   * charges no less than EC2 bills; the configured GPUs when no type is known.
   */
  launchGpus(): number {
    return this.knownGpus() ?? this.gpusPerNode;
  }

  /**
   * The most GPUs of the group's known types (named by it, or its instances' at the last listing), as
   * the budget guard counts the group's nodes (infra/budget-guard groupGpusPerNode); undefined when
   * none is known. What the paths taken while the listing fails size the group by (blind-trim.ts).
   */
  knownGpus(): number | undefined {
    const known = [...this.groupTypes, ...this.listedTypes].flatMap((t) => {
      const gpus = instanceTypeFacts(t)?.gpus;
      return gpus === undefined ? [] : [gpus];
    });
    return known.length > 0 ? Math.max(...known) : undefined;
  }

  /** Why raises are refused now, naming both types and the setting; undefined when they agree. */
  mismatch(): string | undefined {
    const off = [...new Set([...this.offTypes(this.groupTypes), ...this.listedOff])];
    if (off.length === 0) return undefined;
    const theirs = off.map((t) => `${t} (${gpusOf(instanceTypeFacts(t)?.gpus ?? 0)})`).join(', ');
    return (
      `the node group's instances are ${theirs}, boa is configured with ${this.instanceType ?? 'a type'} ` +
      `(${gpusOf(this.gpusPerNode)} per node): boa does not raise the group until they agree. Set ` +
      "BOA_INSTANCE_TYPE (instanceType) to the group's type and restart boa, or change the group's type " +
      'back (docs/deploy.md, Changing the instance type)'
    );
  }

  /** Known types whose GPU count is not the configured one's. */
  private offTypes(types: readonly string[]): string[] {
    return [...new Set(types)].filter((t) => {
      const gpus = instanceTypeFacts(t)?.gpus;
      return gpus !== undefined && gpus !== this.gpusPerNode;
    });
  }

  /** Logged when the mismatch starts or changes, and when it ends. */
  private report(): void {
    const now = this.mismatch();
    if (now === this.said) return;
    if (now) this.logger.error({ event: 'nodegroup.type-mismatch', configured: this.instanceType }, now);
    else
      this.logger.info(
        { event: 'nodegroup.type-agrees', configured: this.instanceType },
        "the node group's instance types agree with boa's again: raises allowed",
      );
    this.said = now;
  }
}

const gpusOf = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;
