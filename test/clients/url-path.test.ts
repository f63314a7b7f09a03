/**
 * A job whose BOA_URL has /v1 after the host (docs/client.md writes the routes as /v1/jobs/...) asks
 * boa for /v1/v1/jobs/{id}/...: boa said "401 wrong token" to a token that was right, and the job's
 * author went looking at the token. boa says what is wrong: the path, and BOA_URL without it.
 */
import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BoaJob } from '../../clients/node/boa-job.mjs';
import { hasPython, killLeftovers, run } from './processes.ts';
import { servedBoaForFile } from '../helpers/served-boa-for-file.ts';

const ROOT = resolve(import.meta.dirname, '../..');
vi.setConfig({ testTimeout: 60_000 });

const { boa } = servedBoaForFile();
afterEach(() => killLeftovers());

const WANTED =
  /no route GET \/v1\/v1\/jobs\/\d+\/allocation: .*BOA_URL is boa's address without the path "\/v1"/;

describe('a BOA_URL with /v1 after the host', () => {
  it('the Node client gets a 404 naming the path, not a 401 for its right token', async () => {
    const job = await boa.makeJob(false);
    const client = new BoaJob({
      url: `${boa.url}/v1`,
      jobId: job.id,
      token: job.token,
      handleSigterm: false,
    });
    const refused = await client.allocation().catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 404, code: 'not_found' });
    expect((refused as Error).message).toMatch(WANTED);
    // The same token at boa's address is the job's.
    const right = new BoaJob({ url: boa.url, jobId: job.id, token: job.token, handleSigterm: false });
    await expect(right.allocation()).resolves.toMatchObject({ jobId: job.id });
    // A wrong token on that path is still no token of any job: the path is what is wrong either way.
    const wrong = new BoaJob({ url: `${boa.url}/v1`, jobId: job.id, token: 'nope', handleSigterm: false });
    await expect(wrong.allocation()).rejects.toMatchObject({ status: 404 });
  });

  for (const [name, command, script] of [
    ['examples/fake-train.mjs', process.execPath, 'examples/fake-train.mjs'],
    ['examples/fake_train.py', 'python3', 'examples/fake_train.py'],
  ] as const) {
    it.skipIf(command === 'python3' && !hasPython)(`${name} self-launched says so and exits 1`, async () => {
      const job = await boa.makeJob(false);
      const env = { BOA_URL: `${boa.url}/v1`, BOA_JOB_ID: String(job.id), BOA_JOB_TOKEN: job.token };
      const { status, out } = await run(command, [script], env, ROOT);
      expect(status, out).toBe(1);
      expect(out).toMatch(WANTED);
      expect(out).not.toMatch(/wrong token/);
    });
  }
});
