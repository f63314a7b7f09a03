/**
 * The settings that follow the instance type (core/instance-types.ts): gpusPerNode and the node price
 * default to the type's; an explicit gpusPerNode must agree with a type boa knows, and a type it does
 * not know needs one. A price boa does not know is null: no $ figure rather than another type's.
 */
import { instanceTypeFacts, knownInstanceTypes } from '../core/instance-types.ts';

interface InstanceSettings {
  readonly instanceType: string;
  readonly gpusPerNode?: number | undefined;
  readonly nodePricePerHour?: number | undefined;
}

export type WithInstanceDefaults<T extends InstanceSettings> = Omit<T, 'gpusPerNode' | 'nodePricePerHour'> & {
  readonly gpusPerNode: number;
  /** Dollars per node-hour; null when neither set nor known for the instance type (no $ figures). */
  readonly nodePricePerHour: number | null;
};

const plural = (n: number) => `${n} GPU${n === 1 ? '' : 's'}`;

/** Why the instance settings do not hold together, each at the setting to change; none when they do. */
export function instanceIssues(c: InstanceSettings): Array<{ path: string[]; message: string }> {
  const facts = instanceTypeFacts(c.instanceType);
  if (!facts) {
    if (c.gpusPerNode !== undefined) return [];
    const families = [...new Set(knownInstanceTypes().map((t) => t.split('.')[0]))].join(', ');
    return [
      {
        path: ['gpusPerNode'],
        message:
          `instance type ${c.instanceType} is not one boa knows the GPUs of (${families}): ` +
          'set gpusPerNode (BOA_GPUS_PER_NODE) to the GPUs one instance has',
      },
    ];
  }
  if (c.gpusPerNode === undefined || c.gpusPerNode === facts.gpus) return [];
  const fitting = knownInstanceTypes().filter((t) => instanceTypeFacts(t)?.gpus === c.gpusPerNode);
  return [
    {
      path: ['gpusPerNode'],
      message:
        `gpusPerNode contradicts instanceType ${c.instanceType}, which has ${plural(facts.gpus)}: ` +
        `leave it unset or set it to ${facts.gpus}` +
        (fitting.length > 0
          ? `, or choose a type with ${plural(c.gpusPerNode)} (${fitting.join(', ')})`
          : ''),
    },
  ];
}

/** The settings with gpusPerNode and the price filled from the instance type where not set. */
export function withInstanceDefaults<T extends InstanceSettings>(c: T): WithInstanceDefaults<T> {
  const facts = instanceTypeFacts(c.instanceType);
  // instanceIssues has refused a type without facts and without gpusPerNode.
  const gpusPerNode = c.gpusPerNode ?? facts?.gpus;
  if (gpusPerNode === undefined) throw new Error(`no gpusPerNode for ${c.instanceType}`);
  return { ...c, gpusPerNode, nodePricePerHour: c.nodePricePerHour ?? facts?.pricePerHour ?? null };
}

/** The start's warning when the $ figures are left out for want of a price, or undefined. */
export function unknownPriceWarning(c: WithInstanceDefaults<InstanceSettings>): string | undefined {
  if (c.nodePricePerHour !== null) return undefined;
  return (
    `no on-demand price known for instance type ${c.instanceType}: the $ figures are left out; ` +
    'set BOA_NODE_PRICE_PER_HOUR (or nodePricePerHour in the config file) to its dollars per node-hour'
  );
}
