import { describe, expect, it } from 'vitest';
import { hasPython, runPythonTests } from './processes.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';

if (!hasPython) console.warn('python3 not found: the Python job client tests are skipped');

describe.skipIf(!hasPython)('Python job client (clients/python/boa_job.py)', () => {
  const { boa } = servedBoaForFile();

  it('passes its unittest suite against a real boa service', { timeout: 300_000 }, async () => {
    const result = await runPythonTests('test_boa_job', boa.url);
    expect(result.status).toBe(0);
    // Every test ran (none skipped for want of the service).
    expect(result.out).toMatch(/Ran 36 tests/);
    expect(result.out).not.toMatch(/skipped/);
  });
});
