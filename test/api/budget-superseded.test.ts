/**
 * Two PUTs of the budget at once: each answer waits for its plan, and meanwhile the other sets its value.
 * The first's answer showed the second's budget with no plan and no word why (found in review); it now
 * says another request set the budget in force. The state is the last write's either way.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../service/harness.ts';

type Booted = Awaited<ReturnType<typeof startService>>;
let boa: Booted | undefined;
afterEach(async () => {
  await boa?.close();
  boa = undefined;
});

describe('PUT /v1/budget raced by another PUT', () => {
  it('the earlier answer says a later request set the budget in force', async () => {
    boa = await startService();
    const [first, second] = await Promise.all([
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }),
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 60 }),
    ]);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    // The view is the budget in force, the later one's; the first answer has no plan for 60 as its own.
    expect(first.body.gpuHoursPerHour).toBe(60);
    expect(first.body.plan).toBeNull();
    expect(first.body.warning).toMatch(
      /^another request set the budget to 60 at \S+Z, after this one set 40: that budget is in force$/,
    );
    expect(second.body.gpuHoursPerHour).toBe(60);
    expect(second.body.warning).toBeNull();
    expect(second.body.plan).not.toBeNull();
    expect((await boa.request('GET', '/v1/budget')).body.gpuHoursPerHour).toBe(60);
  });

  it('the same value set twice at once supersedes nothing', async () => {
    boa = await startService();
    await boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 30 });
    const answers = await Promise.all([
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }),
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.warning).toBeNull();
      expect(answer.body.gpuHoursPerHour).toBe(40);
    }
  });

  it('a warning of its own and the race are both said', async () => {
    // Above the node group's maximum (2 nodes of 4 GPUs): the set warns by itself.
    boa = await startService({ config: { maxNodes: 2 } });
    const [first] = await Promise.all([
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 9 }),
      boa.request('PUT', '/v1/budget', { gpuHoursPerHour: 40 }),
    ]);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.warning).toMatch(
      /^budget 9 is above the 8 GPUs the node group can ever run .*; another request set the budget to 40 /,
    );
  });
});
