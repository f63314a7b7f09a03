import { KubeError, type KubeObject } from './objects.ts';

/** A parsed selector: true when the object matches. */
export type Matcher = (obj: KubeObject) => boolean;

const always: Matcher = () => true;

/** Splits on commas outside parentheses (`a in (x,y),b` has two requirements). */
function requirements(selector: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

function badSelector(selector: string): KubeError {
  return new KubeError(400, 'BadRequest', `unable to parse requirement: invalid selector "${selector}"`);
}

/** Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`. */
export function labelMatcher(selector: string | null): Matcher {
  if (!selector) return always;
  const tests = requirements(selector).map((req): ((labels: Record<string, string>) => boolean) => {
    let m = /^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(req);
    if (m) {
      const [, key, op, list] = m as unknown as [string, string, string, string];
      const values = list.split(',').map((v) => v.trim());
      return op === 'in'
        ? (l) => l[key] !== undefined && values.includes(l[key])
        : (l) => l[key] === undefined || !values.includes(l[key]);
    }
    m = /^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/.exec(req);
    if (m) {
      const [, key, op, value] = m as unknown as [string, string, string, string];
      return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
    }
    m = /^(!?)([\w./-]+)$/.exec(req);
    if (m) {
      const [, not, key] = m as unknown as [string, string, string];
      return not ? (l) => !(key in l) : (l) => key in l;
    }
    throw badSelector(selector);
  });
  return (obj) => tests.every((t) => t(obj.metadata.labels ?? {}));
}

/** The fields the real server lets you select pods, services and nodes on. */
const FIELDS: Record<string, (obj: KubeObject) => string | undefined> = {
  'metadata.name': (o) => o.metadata.name,
  'metadata.namespace': (o) => o.metadata.namespace,
  'spec.nodeName': (o) => o.spec?.nodeName ?? '',
  'status.phase': (o) => o.status?.phase ?? '',
  'spec.unschedulable': (o) => String(Boolean(o.spec?.unschedulable)),
};

/** Field selectors: `field=value`, `field==value`, `field!=value`, on the fields above. */
export function fieldMatcher(selector: string | null): Matcher {
  if (!selector) return always;
  const tests = requirements(selector).map((req): Matcher => {
    const m = /^([\w.]+)\s*(==|=|!=)\s*(.*)$/.exec(req);
    const read = m ? FIELDS[m[1] as string] : undefined;
    if (!m || !read) {
      throw new KubeError(400, 'BadRequest', `field label not supported: ${req.split(/[=!]/)[0] ?? req}`);
    }
    const value = m[3];
    return m[2] === '!=' ? (o) => read(o) !== value : (o) => read(o) === value;
  });
  return (obj) => tests.every((t) => t(obj));
}
