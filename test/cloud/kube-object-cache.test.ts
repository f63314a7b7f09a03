import type { Watch } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ObjectCache } from '../../src/cloud/kubernetes/cache.ts';
import { KUBE_RETRY } from '../../src/cloud/kubernetes/retry.ts';

/**
 * The cache alone, its list held by the test: what boa writes while a relist is on the wire (a log
 * read's relist racing a reconcile's create) must not be lost when the list's older answer arrives.
 */
interface Obj {
  metadata: { name: string; resourceVersion: string };
}
const obj = (name: string, resourceVersion: string): Obj => ({ metadata: { name, resourceVersion } });

function heldCache() {
  let now = 0;
  const lists: { resolve: (answer: { items: Obj[]; metadata: { resourceVersion: string } }) => void }[] = [];
  const events: ((type: string, obj: Obj) => void)[] = [];
  const watch = {
    watch: async (_path: string, _params: unknown, onEvent: (type: string, obj: Obj) => void) => {
      events.push(onEvent);
      return new AbortController();
    },
  } as unknown as Watch;
  const cache = new ObjectCache<Obj>({
    resource: 'pods',
    namespace: 'boa-jobs',
    list: () => new Promise((resolve) => lists.push({ resolve })),
    watch,
    retry: {
      sleep: async () => undefined,
      random: () => 0.5,
      logger: pino({ level: 'silent' }),
      policy: KUBE_RETRY,
    },
    logger: pino({ level: 'silent' }),
    resyncMs: 1_000,
    now: () => now,
  });
  return {
    cache,
    lists,
    /** An event on the watch started last. */
    event: (type: string, o: Obj) => events.at(-1)!(type, o),
    advance: (ms: number) => void (now += ms),
    names: () =>
      cache
        .snapshot()
        .map((o) => o.metadata.name)
        .sort(),
  };
}

const settled = () => new Promise((r) => setImmediate(r));

describe('ObjectCache relist', () => {
  it("keeps what boa wrote while its list was on the wire when the write is newer than the list; not an older one's", async () => {
    const { cache, lists, advance, names } = heldCache();
    const first = cache.current();
    lists[0]!.resolve({ items: [obj('a', '5')], metadata: { resourceVersion: '5' } });
    await first;
    expect(names()).toEqual(['a']);

    advance(1_000); // the resync is due: the next read lists again
    const second = cache.current();
    await settled();
    expect(lists).toHaveLength(2);
    // Our writes answered while the list was out (versions 7 and 8), and a write answered before the state
    // the list shows (version 4, an object deleted since: the list, at 6, no longer has it).
    cache.put(obj('b', '8'));
    cache.put(obj('b', '7')); // an older answer arriving late: the newer one is kept
    cache.put(obj('c', '4'));
    lists[1]!.resolve({ items: [obj('a', '6')], metadata: { resourceVersion: '6' } });
    expect((await second).map((o) => o.metadata.name).sort()).toEqual(['a', 'b']);
    expect(names()).toEqual(['a', 'b']);
    expect(cache.get('a')?.metadata.resourceVersion).toBe('6');
    expect(cache.get('b')?.metadata.resourceVersion).toBe('8');
  });

  it('a write kept across one relist is not carried into the next: that list is the truth', async () => {
    const { cache, lists, advance, names } = heldCache();
    const first = cache.current();
    await settled();
    cache.put(obj('b', '7'));
    lists[0]!.resolve({ items: [], metadata: { resourceVersion: '6' } });
    await first;
    expect(names()).toEqual(['b']);

    advance(1_000);
    const second = cache.current();
    await settled();
    lists[1]!.resolve({ items: [], metadata: { resourceVersion: '9' } }); // b deleted since
    await second;
    expect(names()).toEqual([]);
  });

  it('a write then deleted while the list is on the wire stays gone: seen deleted by the watch, or by our own delete', async () => {
    const { cache, lists, advance, names, event } = heldCache();
    const first = cache.current();
    lists[0]!.resolve({ items: [], metadata: { resourceVersion: '5' } });
    await first;

    advance(1_000);
    const second = cache.current();
    await settled();
    cache.put(obj('b', '7'));
    event('DELETED', obj('b', '8')); // the watch still up while the resync lists
    cache.put(obj('c', '9'));
    cache.forget('c'); // our delete answered with the pod gone
    lists[1]!.resolve({ items: [], metadata: { resourceVersion: '6' } });
    await second;
    expect(names()).toEqual([]);
  });
});
