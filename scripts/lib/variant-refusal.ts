/**
 * What a `--policy`/`--policies` entry with variants no policy takes is told: the one variant that is
 * wrong and what that variant takes, or the policy's variant names. The whole list of every policy's
 * variants (VARIANTS_HELP, 2,000 characters) was the error, the one wrong word lost in it.
 */
import { VARIANTS_HELP } from './boa-variants.ts';

/** Each `policy@nameX (what it does)` VARIANTS_HELP describes; descriptions hold one level of (). */
const DESCRIBED = [...VARIANTS_HELP.matchAll(/([\w*-]+)@([a-z]+)([A-Z]?) \(((?:[^()]|\([^()]*\))*)\)/g)].map(
  ([, policy, word, value, what]) => ({ policy: policy!, word: word!, value: value!, what: what! }),
);

const appliesTo = (entryPolicy: string, policy: string) =>
  entryPolicy === policy || (entryPolicy === 'pollux-*' && policy.startsWith('pollux-'));

/**
 * The refusal of `spec` (policy@variant@...), `alone` saying whether a variant name parses on its own
 * for the policy.
 */
export function variantRefusal(spec: string, policy: string, alone: (name: string) => boolean): string {
  const own = DESCRIBED.filter((d) => appliesTo(d.policy, policy));
  if (own.length === 0) return `"${spec}": ${policy} has no variants (docs/simulator.md#variants)`;
  const names = own.map((d) => `${d.word}${d.value}`).join(', ');
  const wrong = spec
    .split('@')
    .slice(1)
    .find((name) => !alone(name));
  if (wrong === undefined) {
    return (
      `"${spec}": each variant at most once` +
      (policy === 'boa' ? ', and oracle not with conf, firstday or rise (they change online rates only)' : '')
    );
  }
  if (wrong === '') return `"${spec}": a variant name is empty; ${policy}'s variants: ${names}`;
  const word = /^[a-z]+/.exec(wrong)?.[0];
  const meant = own.find((d) => d.word === word && d.value !== '');
  if (meant)
    return `"${spec}": ${wrong} is not a value ${policy}@${meant.word}${meant.value} takes (${meant.what})`;
  return `"${spec}": ${wrong} is not a variant of ${policy}; its variants: ${names} (docs/simulator.md#variants)`;
}
