import { pino } from 'pino';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { LocalNodePool } from '../../src/cloud/local/local-node-pool.ts';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { fakeTime } from './fake-time.ts';
import { GPUS, nodePoolContract } from './node-pool-contract.ts';

const silent = pino({ level: 'silent' });

nodePoolContract('LocalNodePool', {
  settleMs: 91_000,
  make: ({ minSize, maxSize }) => {
    const time = fakeTime();
    let changes = 0;
    const pool = new LocalNodePool(
      { minSize, maxSize, bootSeconds: 90, releaseSeconds: 30, gpusPerNode: GPUS },
      time.clock,
      {
        logger: silent,
        onChange: () => changes++,
      },
    );
    // The constructor's own launch of minSize nodes is not a resize.
    changes = 0;
    return { pool, advance: time.advance, now: time.clock.now, resizes: () => changes };
  },
});

nodePoolContract('EksNodePool over an emulated node group', {
  settleMs: 61_000,
  make: ({ minSize, maxSize }) => {
    const time = fakeTime();
    const group = emulateNodegroup({ clock: time.clock, minSize, maxSize, bootMs: 60_000 });
    const pool = new EksNodePool(
      { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: GPUS },
      {
        eks: group.eks,
        ec2: group.ec2,
        autoscaling: group.autoscaling,
        nodes: group.kube,
        clock: time.clock,
        sleep: time.sleep,
        random: () => 0.5,
        logger: silent,
      },
    );
    return { pool, advance: time.advance, now: time.clock.now, resizes: () => group.updateCalls().length };
  },
});
