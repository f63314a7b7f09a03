import { entriesOf, MAX_PROFILE_ENTRIES, tooManyEntries } from '../core/profile-entries.ts';
import type { BoaService } from './service.ts';

/** The classes plans leave out, and why (for status and the log); null while the classes fit. */
export interface ClassesLeftOut {
  readonly classes: readonly string[];
  readonly message: string;
}

const memos = new WeakMap<BoaService, { key: string; leftOut: ClassesLeftOut | null }>();

/**
 * The stored classes plans leave out: a data dir from before the speedup-table bound (profile-entries.ts)
 * may hold more entries than it, and every plan then took minutes. Refusing the start would leave no way
 * to fix it (`boa classes put` and `delete` need the service), so the service starts and plans without
 * the largest classes, until the rest fit; nothing stored is touched. Read again when a class changes.
 */
export function classesLeftOut(svc: BoaService): ClassesLeftOut | null {
  // With the count of classes: the start's loading of them is no class change.
  const key = `${svc.state.classesChanged}:${svc.state.classes.size}`;
  const memo = memos.get(svc);
  if (memo?.key === key) return memo.leftOut;
  const leftOut = leftOutOf(svc);
  memos.set(svc, { key, leftOut });
  return leftOut;
}

function leftOutOf(svc: BoaService): ClassesLeftOut | null {
  const profiles = [...svc.state.classes.values()].map((c) => c.profile);
  if (tooManyEntries(profiles) === null) return null;
  const total = profiles.reduce((sum, p) => sum + entriesOf(p), 0);
  const kept = [...profiles].sort((a, b) => entriesOf(a) - entriesOf(b));
  const left: typeof profiles = [];
  while (kept.length > 1 && tooManyEntries(kept) !== null) left.push(kept.pop()!);
  // One class alone over the bound is left out too: none is planned rather than plans of minutes.
  if (tooManyEntries(kept) !== null) left.push(kept.pop()!);
  const names = left.map((p) => p.name);
  const each = left.map((p) => `${p.name} (${entriesOf(p)} entries over ${p.epochs.length} epochs)`);
  return {
    classes: names,
    message:
      `classes ${each.join(', ')} are left out of plans (their jobs wait, new ones are refused): ` +
      `the stored classes' speedup tables hold ${total} entries (widths x statistical epochs), more ` +
      `than the ${MAX_PROFILE_ENTRIES} kept so that plans stay quick (stored before that bound). ` +
      'Nothing stored is changed: put each again ' +
      'with only the widths a job may be given or fewer statistical epochs (boa classes put FILE), or ' +
      `delete it (boa classes delete ${names[0]})`,
  };
}
