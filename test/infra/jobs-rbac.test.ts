import type { Template } from 'aws-cdk-lib/assertions';
import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { ContextError, readConfig } from '../../infra/context.ts';
import {
  executorRbacManifests,
  JOBS_RULES,
  NODE_RULES,
  type PolicyRule,
  STORAGE_CLASS_RULES,
} from '../../infra/k8s/jobs-rbac.ts';
import { KubeClusterNodes } from '../../src/cloud/aws/kube-cluster-nodes.ts';
import { createKubernetesExecutor } from '../../src/cloud/kubernetes/index.ts';
import type { DesiredJob } from '../../src/service/ports.ts';
import { fakeTime } from '../cloud/fake-time.ts';
import { startFakeKubeApi } from '../fakes/kube-api/index.ts';
import { kubernetesObjects, REQUIRED_CONTEXT, synthTemplate } from './synth.ts';

// One synth (they are slow on a shared machine); the context key's path into it is the same prop.
let objects: Map<string, any>;
beforeAll(() => {
  objects = kubernetesObjects(synthTemplate() as Template);
}, 120_000);

const verbs = ['create', 'delete', 'get', 'list', 'watch'];
const boaAccount = { kind: 'ServiceAccount', name: 'boa', namespace: 'boa' };

describe("the Kubernetes executor's RBAC in the CDK app", () => {
  it('creates the jobs namespace (baseline Pod Security) and tells boa its name', () => {
    expect(objects.get('Namespace/boa-jobs')?.metadata.labels['pod-security.kubernetes.io/enforce']).toBe(
      'baseline',
    );
    const env = objects.get('Deployment/boa').spec.template.spec.containers[0].env;
    expect(env).toContainEqual({ name: 'BOA_JOBS_NAMESPACE', value: 'boa-jobs' });
  });

  it("grants pods and services create/delete/get/list/watch, reading pods' logs and volume claims, creating secrets and network policies, and get/create/update on its claim's Lease, in the jobs namespace only", () => {
    const role = objects.get('Role/boa-executor');
    expect(role.metadata.namespace).toBe('boa-jobs');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['pods', 'services'], verbs },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      // The jobs' tokens: written, never read back, collected with their Service.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      // Each job's NetworkPolicy: the same.
      {
        apiGroups: ['networking.k8s.io'],
        resources: ['networkpolicies'],
        verbs: ['create', 'list', 'watch'],
      },
      // A job's checkpoint claim, read at submission; never written.
      { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get'] },
      // The namespace's claim (Lease boa-owner): read, renewed or taken over by name, made once; never
      // deleted. Create cannot be limited by name.
      {
        apiGroups: ['coordination.k8s.io'],
        resources: ['leases'],
        resourceNames: ['boa-owner'],
        verbs: ['get', 'update'],
      },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    ]);
    const binding = objects.get('RoleBinding/boa-executor');
    expect(binding.metadata.namespace).toBe('boa-jobs');
    expect(binding.roleRef).toEqual({
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'boa-executor',
    });
    expect(binding.subjects).toEqual([boaAccount]);
  });

  it('grants nodes list/watch (and patch, to cordon), pods list and storage classes get cluster-wide, and no wildcard anywhere', () => {
    expect(objects.get('ClusterRole/boa-node-reader').rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch', 'patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      // A Pending checkpoint claim's class, read at submission.
      { apiGroups: ['storage.k8s.io'], resources: ['storageclasses'], verbs: ['get'] },
    ]);
    expect(objects.get('ClusterRoleBinding/boa-node-reader').subjects).toEqual([boaAccount]);
    const rbac = [...objects.values()].filter((o) => String(o.apiVersion).startsWith('rbac.'));
    const executors = rbac.filter((o) => o.metadata.labels?.['app.kubernetes.io/component'] === 'executor');
    expect(executors.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'ClusterRole/boa-node-reader',
      'ClusterRoleBinding/boa-node-reader',
      'Role/boa-executor',
      'RoleBinding/boa-executor',
    ]);
    expect(JSON.stringify(rbac)).not.toContain('"*"');
  });

  it('follows the jobsNamespace context key, and refuses a bad one', () => {
    const withNamespace = (jobsNamespace: string) =>
      readConfig((key) => ({ ...REQUIRED_CONTEXT, jobsNamespace })[key as keyof typeof REQUIRED_CONTEXT]);
    expect(withNamespace('team-a').jobsNamespace).toBe('team-a');
    const manifests = executorRbacManifests({
      jobsNamespace: 'team-a',
      serviceAccount: { name: 'boa', namespace: 'boa' },
    }) as any[];
    expect(manifests.filter((m) => m.kind.startsWith('Role')).map((m) => m.metadata.namespace)).toEqual([
      'team-a',
      'team-a',
    ]);
    expect(() => withNamespace('Team A')).toThrow(ContextError);
    expect(() => withNamespace('Team A')).toThrow(/jobsNamespace/);
    expect(() => withNamespace('boa')).toThrow(/not boa's \("boa"\)/);
  });
});

/** The RBAC verb a request needs, as the API server's authorizer derives it. */
function verbOf(method: string, path: string, watch: boolean): string {
  const named =
    /\/(pods|services|secrets|networkpolicies|persistentvolumeclaims|nodes|storageclasses|leases)\/[^/]+(\/log)?$/.test(
      path,
    );
  if (method === 'GET') return watch ? 'watch' : named ? 'get' : 'list';
  return { POST: 'create', DELETE: 'delete', PUT: 'update', PATCH: 'patch' }[method] ?? method;
}

/** As the authorizer decides: a rule limited by name covers only requests to those objects by name. */
const allowed = (
  rules: readonly PolicyRule[],
  group: string,
  resource: string,
  verb: string,
  name?: string,
) =>
  rules.some(
    (r) =>
      r.apiGroups.includes(group) &&
      r.resources.includes(resource) &&
      r.verbs.includes(verb) &&
      (r.resourceNames === undefined || (name !== undefined && r.resourceNames.includes(name))),
  );

/**
 * A request's API group, resource (a subresource is its own: /pods/NAME/log is pods/log) and namespace
 * ('' for a cluster-scoped one, such as /apis/storage.k8s.io/v1/storageclasses/NAME).
 */
function target(path: string): { group: string; resource: string; namespace: string; name?: string } {
  const parts = path.split('/').slice(1);
  const [group, rest] = parts[0] === 'api' ? ['', parts.slice(2)] : [parts[1]!, parts.slice(3)];
  const inNamespace = rest[0] === 'namespaces';
  const [resource, name, sub] = inNamespace ? rest.slice(2) : rest;
  return {
    group,
    resource: sub ? `${resource}/${sub}` : resource!,
    namespace: inNamespace ? rest[1]! : '',
    ...(name === undefined ? {} : { name: name.split('?')[0] }),
  };
}

describe('the rules cover every call the executor makes', () => {
  it('a job started, rescaled and removed, and the claim renewed: only granted verbs, in the jobs namespace', async () => {
    const fake = await startFakeKubeApi({ kubelet: { autoStartMs: 0, autoStopMs: 0 } });
    // The executor's clock, moved on at the end for the claim's renewal.
    let skipped = 0;
    try {
      const nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
      const job = (generation: number, on: string[]): DesiredJob => ({
        jobId: 1,
        generation,
        replicas: on.map((node, rank) => ({
          jobId: 1,
          generation,
          rank,
          node,
          gpus: 4,
          workload: { image: 'i', command: ['c'] },
          env: { BOA_JOB_TOKEN: 'job-1-token' },
        })),
      });
      const executor = createKubernetesExecutor(
        { terminationGraceSeconds: 1, kubernetes: { namespace: 'boa-jobs' } },
        pino({ level: 'silent' }),
        { instanceId: 'test-boa', kubeConfig: fake.kubeConfig(), now: () => Date.now() + skipped },
      );
      const settle = async (desired: DesiredJob[], done: () => boolean) => {
        for (let i = 0; i < 100 && !done(); i++) {
          await executor.reconcile(desired);
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(done()).toBe(true);
      };
      const names = () =>
        fake
          .pods('boa-jobs')
          .map((p) => p.metadata.name)
          .sort();
      // Its submission: the checkpoint claim read.
      fake.store.create('persistentvolumeclaims', 'boa-jobs', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'ckpt' } as never,
        spec: { accessModes: ['ReadWriteMany'] },
        status: { phase: 'Bound' },
      });
      expect(await executor.checkVolumeClaim!('ckpt')).toBeUndefined();
      // A Pending one: its class read, cluster-wide.
      fake.store.create('storageclasses', undefined, {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'efs' } as never,
        provisioner: 'efs.csi.aws.com',
        volumeBindingMode: 'Immediate',
      });
      fake.store.create('persistentvolumeclaims', 'boa-jobs', {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'ckpt-new' } as never,
        spec: { accessModes: ['ReadWriteMany'], storageClassName: 'efs' },
        status: { phase: 'Pending' },
      });
      expect(await executor.checkVolumeClaim!('ckpt-new')).toMatchObject({ kind: 'binding' });
      await settle([job(1, nodes.slice(0, 1))], () => names().join() === 'boa-job-1-g1-r0');
      expect(await executor.logs!({ jobId: 1, rank: 0, tailLines: 10 })).toMatchObject({ generation: 1 });
      await settle([job(2, nodes)], () => names().join() === 'boa-job-1-g2-r0,boa-job-1-g2-r1');
      const objects = () =>
        fake.services('boa-jobs').length +
        fake.secrets('boa-jobs').length +
        fake.networkPolicies('boa-jobs').length;
      await settle([], () => names().length === 0 && objects() === 0);
      // A minute on, the claim made by the first pass is renewed.
      skipped = 61_000;
      await executor.reconcile([]);
      expect(fake.leases('boa-jobs')[0]?.spec.renewTime).not.toBe(
        fake.leases('boa-jobs')[0]?.spec.acquireTime,
      );
      await executor.close();

      const used = new Set<string>();
      for (const r of fake.requests) {
        const { group, resource, namespace, name } = target(r.path);
        // Cluster-scoped requests are the ClusterRole's (storage classes, and the Nodes pods are made on
        // only when listed); all else the jobs namespace's Role.
        const rules = namespace === '' ? [...NODE_RULES, ...STORAGE_CLASS_RULES] : JOBS_RULES;
        if (namespace !== '') expect(namespace, r.path).toBe('boa-jobs');
        const verb = verbOf(r.method, r.path, r.watch);
        used.add(`${resource}:${verb}`);
        expect(allowed(rules, group, resource, verb, name), `${r.method} ${r.path}`).toBe(true);
      }
      // The scenario did exercise the executor's verbs.
      expect([...used].sort()).toEqual(
        expect.arrayContaining([
          'pods:create',
          'pods:delete',
          'pods:list',
          'pods:watch',
          'pods/log:get',
          'services:create',
          'persistentvolumeclaims:get',
          'storageclasses:get',
          'nodes:list',
          'nodes:watch',
        ]),
      );
      // Least privilege on secrets, network policies, claims, storage classes and leases: every verb granted is used, and no other (the
      // GC deletes them with the job's Service; secrets are never read).
      for (const resource of [
        'secrets',
        'networkpolicies',
        'persistentvolumeclaims',
        'storageclasses',
        'leases',
      ]) {
        const granted = [...JOBS_RULES, ...STORAGE_CLASS_RULES]
          .filter((r) => r.resources.includes(resource))
          .flatMap((r) => r.verbs);
        const usedOn = [...used].filter((u) => u.startsWith(`${resource}:`)).map((u) => u.split(':')[1]);
        expect(usedOn.sort(), resource).toEqual([...granted].sort());
      }
    } finally {
      await fake.close();
    }
  });
});

describe('the rules cover the force delete of a pod stuck on a node gone NotReady', () => {
  it('lists that node (by name, no get) and deletes the pod: verbs already granted', async () => {
    let t = Date.now();
    const fake = await startFakeKubeApi({ now: () => t, kubelet: { autoStartMs: 0 } });
    const executor = createKubernetesExecutor(
      { terminationGraceSeconds: 1, kubernetes: { namespace: 'boa-jobs' } },
      pino({ level: 'silent' }),
      { instanceId: 'test-boa', kubeConfig: fake.kubeConfig(), now: () => t },
    );
    try {
      const nodes = [fake.kubelet.addNode(), fake.kubelet.addNode()].map((n) => n.metadata.name);
      const job = (generation: number, node: string): DesiredJob => ({
        jobId: 1,
        generation,
        replicas: [
          { jobId: 1, generation, rank: 0, node, gpus: 4, workload: { image: 'i', command: ['c'] }, env: {} },
        ],
      });
      const settle = async (desired: DesiredJob[], done: () => boolean) => {
        for (let i = 0; i < 100 && !done(); i++) {
          await executor.reconcile(desired);
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(done()).toBe(true);
      };
      const running = (name: string) =>
        fake.pods('boa-jobs').some((p) => p.metadata.name === name && p.status?.phase === 'Running');
      await settle([job(1, nodes[0]!)], () => running('boa-job-1-g1-r0'));
      fake.kubelet.setNodeReady(nodes[0]!, false);
      await executor.reconcile([job(2, nodes[1]!)]);
      // Past the grace, the margin and the 5 minutes a node must have been not Ready.
      t += 360_000;
      await settle([job(2, nodes[1]!)], () => running('boa-job-1-g2-r0'));
      const used = new Set<string>();
      for (const r of fake.requests) {
        const { group, resource, namespace, name } = target(r.path);
        const rules = namespace === '' ? [...NODE_RULES, ...STORAGE_CLASS_RULES] : JOBS_RULES;
        const verb = verbOf(r.method, r.path, r.watch);
        used.add(`${resource}:${verb}`);
        expect(allowed(rules, group, resource, verb, name), `${r.method} ${r.path}`).toBe(true);
      }
      expect([...used]).toEqual(expect.arrayContaining(['nodes:list', 'pods:delete']));
    } finally {
      await executor.close();
      await fake.close();
    }
  });
});

describe("the node rules are exactly what boa's Node informer uses", () => {
  it('lists, watches and cordons (patch) nodes, and needs no other verb on them', async () => {
    const fake = await startFakeKubeApi();
    const time = fakeTime();
    const nodes = new KubeClusterNodes(fake.kubeConfig(), {
      logger: pino({ level: 'silent' }),
      clock: time.clock,
      sleep: time.sleep,
      random: () => 0,
    });
    try {
      fake.kubelet.addNode({ name: 'n1', gpus: 4, ready: true, instanceId: 'i-0abc' });
      expect((await nodes.list()).map((n) => n.name)).toEqual(['n1']);
      await nodes.cordon('n1');
      // A resync (the watch stays up): a relist, as the node reconciler's reads do every few minutes.
      time.advance(600_000);
      expect(await nodes.list()).toMatchObject([{ name: 'n1', unschedulable: true }]);
      // The GPU pods boa did not create on its nodes: one list across namespaces per node.
      await nodes.foreignGpus(['n1']);
      // The informer's watch is started and resumed in the background: give it a moment to connect.
      for (let i = 0; i < 250 && !fake.requests.some((r) => r.watch); i++)
        await new Promise((r) => setTimeout(r, 20));
    } finally {
      await nodes.close();
      await fake.close();
    }
    const used = new Map<string, Set<string>>();
    for (const r of fake.requests) {
      const resource = /^\/api\/v1\/(nodes|pods)\b/.exec(r.path)?.[1];
      expect(resource).toBeDefined();
      if (!used.has(resource!)) used.set(resource!, new Set());
      used.get(resource!)!.add(verbOf(r.method, r.path, r.watch));
    }
    // Least privilege: every verb granted on nodes and pods is one boa uses, and it uses no other.
    for (const rule of NODE_RULES) {
      expect([...(used.get(rule.resources[0]!) ?? [])].sort()).toEqual([...rule.verbs].sort());
    }
  });
});
