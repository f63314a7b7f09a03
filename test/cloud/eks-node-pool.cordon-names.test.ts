import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ClusterNodes } from '../../src/cloud/aws/cluster-nodes.ts';
import type { ForeignGpus } from '../../src/cloud/aws/foreign-gpu-pods.ts';
import { EksNodePool } from '../../src/cloud/aws/eks-node-pool.ts';
import { CLUSTER, emulateNodegroup, NODEGROUP } from './emulated-nodegroup.ts';
import { fakeTime } from './fake-time.ts';

/**
 * cordon() and uncordon() find an instance's Kubernetes node by the names the last listing found. The
 * node pass (removals: cordon, or uncordon when a removal is called off) runs in the background while
 * the next tick lists the nodes: a listing that emptied the names and then waited (for the foreign GPU
 * pods' lists, up to seconds) made both skip the node as "not registered" and return as if done. A
 * removal called off then left its node cordoned: never ready for jobs again, and paid.
 */
function setup() {
  const time = fakeTime();
  const ng = emulateNodegroup({ clock: time.clock, minSize: 0, maxSize: 4, desiredSize: 2 });
  const calls: string[] = [];
  let gate: Promise<void> | undefined;
  const nodes: ClusterNodes = {
    list: () => ng.kube.list(),
    cordon: async (name) => {
      calls.push(`cordon ${name}`);
      await ng.kube.cordon(name);
    },
    uncordon: async (name) => {
      calls.push(`uncordon ${name}`);
      await ng.kube.uncordon(name);
    },
    // The pods on the nodes are listed after the nodes: a listing waits here while `gate` is held.
    foreignGpus: async () => {
      await gate;
      return new Map<string, ForeignGpus>();
    },
  };
  const pool = new EksNodePool(
    { clusterName: CLUSTER, nodegroupName: NODEGROUP, gpusPerNode: 4 },
    {
      eks: ng.eks,
      ec2: ng.ec2,
      autoscaling: ng.autoscaling,
      nodes,
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0.5,
      logger: pino({ level: 'silent' }),
    },
  );
  const hold = () => {
    let release!: () => void;
    gate = new Promise((resolve) => (release = resolve));
    return () => {
      gate = undefined;
      release();
    };
  };
  return { ng, pool, calls, hold };
}

/** Lets the listing started run up to the point where it waits on the gate. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('EksNodePool cordon and uncordon while a listing runs', () => {
  it('uncordons the node of a removal called off while the next listing is under way', async () => {
    const { ng, pool, calls, hold } = setup();
    const [first] = await pool.listNodes();
    const id = first!.id;
    const name = ng.kube.nameOf(id);
    await pool.cordon([id]);
    expect(calls).toEqual([`cordon ${name}`]);

    const release = hold();
    const listing = pool.listNodes();
    await settle();
    // The removal is called off meanwhile: the node must be open to jobs again.
    await pool.uncordon([id]);
    release();
    await listing;

    expect(calls).toEqual([`cordon ${name}`, `uncordon ${name}`]);
    const after = (await pool.listNodes()).find((n) => n.id === id);
    expect(after).toMatchObject({ ready: true });
    expect(after?.cordoned).toBeUndefined();
  });

  it('cordons a node chosen while the next listing is under way', async () => {
    const { ng, pool, calls, hold } = setup();
    const [first] = await pool.listNodes();
    const id = first!.id;
    const release = hold();
    const listing = pool.listNodes();
    await settle();
    await pool.cordon([id]);
    release();
    await listing;
    expect(calls).toEqual([`cordon ${ng.kube.nameOf(id)}`]);
    expect((await pool.listNodes()).find((n) => n.id === id)).toMatchObject({
      cordoned: true,
      ready: false,
    });
  });

  it('finds the node by its instance when no listing has named it yet (a restarted service)', async () => {
    const { ng, pool, calls } = setup();
    const id = ng.instances[0]!.id;
    await pool.cordon([id]);
    await pool.uncordon([id]);
    const name = ng.kube.nameOf(id);
    expect(calls).toEqual([`cordon ${name}`, `uncordon ${name}`]);
  });

  it('still skips an instance whose node has not registered', async () => {
    const { pool, calls } = setup();
    await pool.cordon(['i-0000000000notthere']);
    await pool.uncordon(['i-0000000000notthere']);
    expect(calls).toEqual([]);
  });
});
