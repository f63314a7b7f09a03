import { KubeError } from './objects.ts';

/** RFC 7386 JSON merge patch: objects merge, null deletes, everything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function unescape(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

interface Operation {
  op: string;
  path: string;
  value?: unknown;
}

/** RFC 6902 JSON patch, the operations clients send: add, remove, replace, test. */
export function jsonPatch(target: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw new KubeError(400, 'BadRequest', 'json patch must be an array');
  const doc = structuredClone(target) as Record<string, unknown>;
  for (const { op, path, value } of operations as Operation[]) {
    const tokens = path.split('/').slice(1).map(unescape);
    const last = tokens.pop();
    if (last === undefined) throw new KubeError(422, 'Invalid', `json patch: bad path "${path}"`);
    let parent: any = doc;
    for (const token of tokens) {
      if (parent[token] === undefined && op === 'add') parent[token] = {};
      parent = parent[token];
      if (parent === undefined || parent === null) {
        throw new KubeError(422, 'Invalid', `json patch: path "${path}" does not exist`);
      }
    }
    const index = Array.isArray(parent) ? (last === '-' ? parent.length : Number(last)) : last;
    if (op === 'test') {
      if (JSON.stringify(parent[index]) !== JSON.stringify(value)) {
        throw new KubeError(422, 'Invalid', `json patch: test failed at "${path}"`);
      }
    } else if (op === 'remove') {
      if (Array.isArray(parent)) parent.splice(index as number, 1);
      else delete parent[index];
    } else if (op === 'add' && Array.isArray(parent)) {
      parent.splice(index as number, 0, value);
    } else if (op === 'add' || op === 'replace') {
      parent[index] = value;
    } else {
      throw new KubeError(422, 'Invalid', `json patch: unsupported op "${op}"`);
    }
  }
  return doc;
}

/**
 * Applies a PATCH body by its content type. Strategic merge is treated as a merge patch: right for maps
 * and scalars (labels, spec.unschedulable, annotations), while lists are replaced instead of merged by key.
 */
export function applyPatch(contentType: string, target: unknown, body: unknown): unknown {
  const type = contentType.split(';')[0]?.trim();
  if (type === 'application/json-patch+json') return jsonPatch(target, body);
  if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json') {
    return mergePatch(target, body);
  }
  throw new KubeError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format: ${type}`,
  );
}
