import { afterAll, afterEach, beforeAll } from 'vitest';
import type { BoaJob } from '../../clients/node/boa-job.mjs';
import { startServedBoa, type ServedBoa } from '../clients/served.ts';

/**
 * The served boa (test/clients/served.ts) that a job client test file's tests share: started before
 * them, closed after them (each test's job still gets a fresh service behind its URL). After each test
 * the clients pushed on `clients` are closed and what the test set boa to do is undone: failures, proxy
 * pages, a held request, the requests counted. Register it where the tests are (the file, or a describe).
 * `boa` stands for the one started, which exists only once the tests run: each use goes to it.
 */
export function servedBoaForFile(): { boa: ServedBoa; clients: BoaJob[] } {
  let started: ServedBoa | undefined;
  beforeAll(async () => {
    started = await startServedBoa();
  });
  afterAll(async () => {
    await started?.close();
  });
  const clients: BoaJob[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    // Job ids start again at 1 on the next test's service: no counts carried over.
    started?.takeRequests();
    started?.failNext(0);
    started?.answerNext(0, 200, 'text/html', '');
    started?.release();
  });
  const boa = new Proxy({} as ServedBoa, {
    get(_, key) {
      if (!started) throw new Error('the served boa is used before its beforeAll started it');
      return Reflect.get(started, key) as unknown;
    },
  });
  return { boa, clients };
}
