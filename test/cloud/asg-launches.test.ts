import {
  AutoScalingClient,
  AutoScalingServiceException,
  DescribeScalingActivitiesCommand,
} from '@aws-sdk/client-auto-scaling';
import { mockClient } from 'aws-sdk-client-mock';
import { expect, it } from 'vitest';
import { recentLaunchFailures } from '../../src/cloud/aws/asg.ts';
import { instancesLaunchedSince } from '../../src/cloud/aws/asg-launches.ts';
import { DEFAULT_RETRY } from '../../src/cloud/retry.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

const T = Date.UTC(2026, 11, 2, 3, 0, 0);
const at = (minutes: number) => new Date(T + minutes * 60_000);
let ids = 0;
/** A scaling activity as the ASG answers it (Successful unless told). */
const activity = (
  minutes: number,
  Description: string,
  extra: { EndTime?: Date; StatusCode?: 'Failed' } = {},
) => ({
  ActivityId: `activity-${++ids}`,
  AutoScalingGroupName: 'eks-gpu',
  Cause: Description,
  StatusCode: 'Successful' as const,
  StartTime: at(minutes),
  Description,
  ...extra,
});

function context() {
  const client = new AutoScalingClient({ region: 'us-east-1' });
  const mock = mockClient(client);
  const ctx = {
    sleep: fakeTime().sleep,
    random: () => 0.5,
    logger: captureLogs().logger,
    policy: DEFAULT_RETRY,
    autoscaling: client,
  };
  return { mock, ctx };
}

// Newest first, as the ASG answers; two pages.
const pages = [
  {
    Activities: [
      activity(9, 'Terminating EC2 instance: i-0bb', { EndTime: at(10) }),
      activity(8, 'Terminating EC2 instance: i-0cc'), // still under way
      activity(7, 'Launching a new EC2 instance: i-0cc'),
      activity(6, 'Launching a new EC2 instance.  Status Reason: ICE', { StatusCode: 'Failed' }),
    ],
    NextToken: 'page-2',
  },
  {
    Activities: [
      activity(5, 'Launching a new EC2 instance: i-0bb', { EndTime: at(5) }),
      activity(-30, 'Launching a new EC2 instance: i-0old'),
    ],
    NextToken: 'page-3',
  },
];

it('reads the launches since `since` across pages, each gone when its termination ended, and stops there', async () => {
  const { mock, ctx } = context();
  mock.on(DescribeScalingActivitiesCommand).callsFake((input) => (input.NextToken ? pages[1] : pages[0]));
  const { instances, truncated } = await instancesLaunchedSince('eks-gpu', T, ctx);
  expect(truncated).toBe(false);
  expect(instances).toEqual(
    expect.arrayContaining([
      { id: 'i-0bb', launchedAt: T + 5 * 60_000, goneAt: T + 10 * 60_000 },
      { id: 'i-0cc', launchedAt: T + 7 * 60_000 },
    ]),
  );
  expect(instances).toHaveLength(2);
  // The second page reached before `since`: no third page is asked for.
  expect(mock.commandCalls(DescribeScalingActivitiesCommand)).toHaveLength(2);
});

it('says when each termination since ended, of instances launched before `since` too; a failed one does not count', async () => {
  const { mock, ctx } = context();
  mock.on(DescribeScalingActivitiesCommand).resolves({
    Activities: [
      // i-0ff: a termination that failed, then one that ended: gone at the second's end.
      activity(9, 'Terminating EC2 instance: i-0ff', { EndTime: at(12) }),
      activity(4, 'Terminating EC2 instance: i-0ff', { EndTime: at(5), StatusCode: 'Failed' }),
      // i-0gg: a termination that failed only; it may still run.
      activity(3, 'Terminating EC2 instance: i-0gg', { EndTime: at(4), StatusCode: 'Failed' }),
      // i-0ii: two that ended (should the group report a retry so): gone at the later end.
      activity(8, 'Terminating EC2 instance: i-0ii', { EndTime: at(10) }),
      activity(2, 'Terminating EC2 instance: i-0ii', { EndTime: at(3) }),
      // i-0hh: launched before `since`, its termination since held by a hook until it ended.
      activity(1, 'Terminating EC2 instance: i-0hh', { EndTime: at(11) }),
      activity(-60, 'Launching a new EC2 instance: i-0hh'),
    ],
  });
  const { instances, gone } = await instancesLaunchedSince('eks-gpu', T, ctx);
  expect(instances).toEqual([]);
  expect(gone).toEqual(
    new Map([
      ['i-0ff', T + 12 * 60_000],
      ['i-0ii', T + 10 * 60_000],
      ['i-0hh', T + 11 * 60_000],
    ]),
  );
});

it('retries a throttled page through the one retry layer', async () => {
  const { mock, ctx } = context();
  const throttled = new AutoScalingServiceException({
    name: 'Throttling',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'Rate exceeded',
  });
  mock
    .on(DescribeScalingActivitiesCommand)
    .rejectsOnce(throttled)
    .resolves({ Activities: [activity(1, 'Launching a new EC2 instance: i-0dd')] });
  const { instances } = await instancesLaunchedSince('eks-gpu', T, ctx);
  expect(instances).toEqual([{ id: 'i-0dd', launchedAt: T + 60_000 }]);
  expect(mock.commandCalls(DescribeScalingActivitiesCommand)).toHaveLength(2);
});

it('reads at most five pages, and says so', async () => {
  const { mock, ctx } = context();
  mock.on(DescribeScalingActivitiesCommand).resolves({
    Activities: [activity(1, 'Launching a new EC2 instance: i-0ee')],
    NextToken: 'more',
  });
  const { truncated } = await instancesLaunchedSince('eks-gpu', T, ctx);
  expect(truncated).toBe(true);
  expect(mock.commandCalls(DescribeScalingActivitiesCommand)).toHaveLength(5);
});

it('finds the launch failures since `since` however many activities came after them (found in review)', async () => {
  // A busy group: 25 activities in the last minutes, newer than the capacity failure 10 minutes ago,
  // which the newest 20 the read took before left out; one older than `since` is not taken.
  const newer = Array.from({ length: 25 }, (_, i) =>
    activity(20 - i * 0.1, `Launching a new EC2 instance: i-${i}`),
  );
  const { mock, ctx } = context();
  mock.on(DescribeScalingActivitiesCommand).callsFake((input) => {
    const all = [
      ...newer,
      activity(10, 'Launching a new EC2 instance.  Status Reason: ICE', { StatusCode: 'Failed' }),
      activity(-20, 'Launching a new EC2 instance.  Status Reason: old', { StatusCode: 'Failed' }),
    ];
    const start = input.NextToken ? Number(input.NextToken) : 0;
    const size = input.MaxRecords ?? 100;
    return {
      Activities: all.slice(start, start + size),
      ...(start + size < all.length ? { NextToken: String(start + size) } : {}),
    };
  });
  const failures = await recentLaunchFailures('eks-gpu', T, ctx);
  expect(failures).toEqual([
    { at: T + 10 * 60_000, message: 'Launching a new EC2 instance.  Status Reason: ICE' },
  ]);
});

it('reads on past an old activity still under way: the ASG lists those first, whatever their start', async () => {
  const { mock, ctx } = context();
  const held = {
    ...activity(-90, 'Terminating EC2 instance: i-0held'),
    StatusCode: 'MidLifecycleAction' as const,
  };
  const firstPage = {
    Activities: [held, activity(9, 'Launching a new EC2 instance: i-0new')],
    NextToken: 'page-2',
  };
  const secondPage = {
    Activities: [
      activity(4, 'Launching a new EC2 instance: i-0mid'),
      activity(-5, 'Launching a new EC2 instance: i-0before'),
    ],
    NextToken: 'page-3',
  };
  mock.on(DescribeScalingActivitiesCommand).callsFake((input) => (input.NextToken ? secondPage : firstPage));
  const { instances } = await instancesLaunchedSince('eks-gpu', T, ctx);
  expect(instances.map((i) => i.id).sort()).toEqual(['i-0mid', 'i-0new']);
  // The ended launch before `since` on the second page ends the read.
  expect(mock.commandCalls(DescribeScalingActivitiesCommand)).toHaveLength(2);
});
