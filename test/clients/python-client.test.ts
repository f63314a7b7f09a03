import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPython, run } from './processes.ts';
import { startServedBoa, type ServedBoa } from './served.ts';

const CLIENT_DIR = resolve(import.meta.dirname, '../../clients/python');
if (!hasPython) console.warn('python3 not found: the Python job client tests are skipped');

describe.skipIf(!hasPython)('Python job client (clients/python/boa_job.py)', () => {
  let boa: ServedBoa;
  beforeAll(async () => {
    boa = await startServedBoa();
  });
  afterAll(async () => {
    await boa?.close();
  });

  it('passes its unittest suite against a real boa service', { timeout: 300_000 }, async () => {
    const result = await run(
      'python3',
      ['-m', 'unittest', '-v', 'test_boa_job'],
      { BOA_TEST_URL: boa.url, PYTHONPATH: CLIENT_DIR },
      resolve(CLIENT_DIR, 'tests'),
    );
    if (result.status !== 0) console.error(result.out);
    expect(result.status).toBe(0);
    // Every test ran (none skipped for want of the service).
    expect(result.out).toMatch(/Ran 35 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
