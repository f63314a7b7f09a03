import { UpdateNodegroupConfigCommand } from '@aws-sdk/client-eks';
import { describe, expect, it } from 'vitest';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { emulateNodegroup } from './emulated-nodegroup.ts';
import { captureLogs, fakeTime } from './fake-time.ts';

/**
 * EksNodePool against a node group whose instance types are not the configured one
 * (instance-type-check.ts); test/service/nodes/instance-type-mismatch.test.ts runs the service on it.
 */
function pool(options: {
  groupType: string;
  configured: string;
  gpusPerNode: number;
  typeInLaunchTemplate?: boolean;
}) {
  const time = fakeTime();
  const logs = captureLogs();
  const ng = emulateNodegroup({
    clock: time.clock,
    minSize: 0,
    maxSize: 4,
    desiredSize: 2,
    updatePolls: 0,
    instanceType: options.groupType,
    ...(options.typeInLaunchTemplate ? { typeInLaunchTemplate: true } : {}),
  });
  ng.asg.step();
  time.advance(120_000); // booted: EC2 running
  const p = new EksNodePool(
    {
      clusterName: 'boa',
      nodegroupName: 'gpu',
      gpusPerNode: options.gpusPerNode,
      instanceType: options.configured,
    },
    { ...ng, clock: time.clock, sleep: time.sleep, logger: logs.logger },
  );
  return { ng, pool: p, logs };
}

describe('EksNodePool and the instance types of its group', () => {
  it('refuses a raise of a group of another GPU count, naming both types and the setting; a lowering goes', async () => {
    const {
      ng,
      pool: p,
      logs,
    } = pool({ groupType: 'g4dn.xlarge', configured: 'g4dn.12xlarge', gpusPerNode: 4 });
    const group = await p.describe();
    expect(group.refusesRaises).toMatch(
      /g4dn\.xlarge \(1 GPU\).*g4dn\.12xlarge \(4 GPUs per node\).*BOA_INSTANCE_TYPE/,
    );
    expect(group.issues?.map((i) => i.code)).toContain('BoaInstanceTypeMismatch');
    await expect(p.setDesiredSize(3)).rejects.toThrow(
      /raise to 3 refused: the node group's instances are g4dn\.xlarge/,
    );
    expect(ng.eksMock.commandCalls(UpdateNodegroupConfigCommand)).toHaveLength(0);
    expect(logs.events()).toContain('resize.refused');
    await p.setDesiredSize(1);
    expect(ng.sizesSent()).toEqual([1]);
  });

  it('each node at its own type’s GPUs; found from the instances when the group names no type', async () => {
    const { pool: p, logs } = pool({
      groupType: 'g4dn.12xlarge',
      configured: 'g4dn.xlarge',
      gpusPerNode: 1,
      typeInLaunchTemplate: true,
    });
    expect((await p.describe()).refusesRaises).toBeUndefined();
    expect((await p.listNodes()).map((n) => n.gpus)).toEqual([4, 4]);
    expect((await p.describe()).refusesRaises).toMatch(/g4dn\.12xlarge \(4 GPUs\)/);
    await expect(p.setDesiredSize(3)).rejects.toThrow(/refused/);
    // One error when it starts, not one a listing.
    await p.listNodes();
    expect(logs.events().filter((e) => e === 'nodegroup.type-mismatch')).toHaveLength(1);
  });

  it('a type boa does not know counts as the configured one’s GPUs, said once, and refuses nothing', async () => {
    const {
      ng,
      pool: p,
      logs,
    } = pool({
      groupType: 'p4d.24xlarge',
      configured: 'g4dn.12xlarge',
      gpusPerNode: 4,
    });
    await p.describe();
    expect((await p.listNodes()).map((n) => n.gpus)).toEqual([4, 4]);
    await p.listNodes();
    const said = logs.lines.filter((l) => l.event === 'node.type-unknown');
    expect(said).toHaveLength(1);
    expect(said[0]).toMatchObject({ instanceType: 'p4d.24xlarge', gpusPerNode: 4 });
    await p.setDesiredSize(3);
    expect(ng.sizesSent()).toEqual([3]);
  });

  it('another type of the same GPU count: warned (the price differs), raises allowed', async () => {
    const {
      ng,
      pool: p,
      logs,
    } = pool({ groupType: 'g4dn.2xlarge', configured: 'g4dn.xlarge', gpusPerNode: 1 });
    await p.describe();
    await p.listNodes();
    await p.setDesiredSize(3);
    expect(ng.sizesSent()).toEqual([3]);
    expect(logs.events().filter((e) => e === 'nodegroup.type-differs')).toHaveLength(1);
    expect(logs.events()).not.toContain('nodegroup.type-mismatch');
  });
});
