/**
 * A budget value refused as not a number or not above 0 says what a budget must be and the smallest
 * accepted one, as a budget below that one (422) does: "gpuHoursPerHour must be > 0" alone read as if
 * 0.5 were accepted, and 0.5 was refused next as below the smallest accepted budget, 4 (a newcomer
 * following the README). The status and code stay 400 `invalid`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

const ALLOWED =
  'gpuHoursPerHour must be a number of GPU-hours per hour of at least 4, the smallest accepted budget ' +
  '(the cheapest class needs at least 1 GPU, and boa pays whole nodes of 4 GPUs), ';

describe('PUT /v1/budget with a value that is no budget', () => {
  it.each([
    [{ gpuHoursPerHour: 0 }, 'got 0; to stop spending, cancel the jobs'],
    [{ gpuHoursPerHour: -5 }, 'got -5; to stop spending, cancel the jobs'],
    [{ gpuHoursPerHour: 'abc' }, 'got "abc", a string'],
    [{ gpuHoursPerHour: '40' }, 'got "40", a string'],
    [{ gpuHoursPerHour: null }, 'got null'],
    // "an object", and a long value cut (found in review: "a object", and a 50 KB string echoed whole).
    [{ gpuHoursPerHour: {} }, 'got {}, an object'],
    [{ gpuHoursPerHour: 'x'.repeat(50_000) }, `got "${'x'.repeat(99)}..., a string`],
  ])('%j: 400 invalid naming the smallest accepted budget', async (body, got) => {
    boa = await startService();
    const refused = await boa.request('PUT', '/v1/budget', body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toEqual({
      code: 'invalid',
      field: 'gpuHoursPerHour',
      message: ALLOWED + got,
      minFeasibleBudget: 4,
    });
    expect((await boa.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBeNull();
  });

  it('the smallest accepted budget follows the node pool (8 GPUs a node: 8)', async () => {
    boa = await startService({ config: { instanceType: 'g5.48xlarge' } });
    const refused = await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 0 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/at least 8, the smallest accepted budget .*nodes of 8 GPUs/);
    expect(refused.body.error.minFeasibleBudget).toBe(8);
    // And a value above 0 below it is the 422 it was, naming the same number.
    const below = await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 0.5 });
    expect(below.status).toBe(422);
    expect(below.body.error.code).toBe('budget_below_minimum');
    expect(below.body.error.message).toMatch(/The smallest accepted budget is 8\./);
  });

  it('other refusals of the field are said as before', async () => {
    boa = await startService();
    const missing = await boa.request('PUT', '/v1/budget', {});
    expect(missing.body.error.message).toBe('gpuHoursPerHour is missing (a number)');
    const big = await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 1e9 });
    expect(big.status).toBe(400);
    expect(big.body.error.message).toBe('gpuHoursPerHour is at most 100000');
    const unknown = await boa.request('PUT', '/v1/budget', { budget: 40 });
    expect(unknown.body.error.message).toBe('unknown field "budget"; the fields are gpuHoursPerHour');
  });
});
