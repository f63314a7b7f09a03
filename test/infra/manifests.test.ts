import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  BOA_DATA_DIR,
  deploymentManifest,
  internalServiceManifest,
  namespaceManifest,
  serviceManifest,
  storageManifests,
} from '../../infra/k8s/boa.ts';
import { nvidiaDevicePluginManifest } from '../../infra/k8s/device-plugin.ts';
import { HUNG_AFTER_MS } from '../../src/api/health.ts';

const deployment = deploymentManifest({
  image: 'example.invalid/boa:1',
  env: { BOA_CLUSTER_NAME: 'boa' },
  nodeSelector: { 'boa/node-role': 'system' },
}) as any;
const pod = deployment.spec.template.spec;
const deployMd = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
const container = pod.containers[0];

describe("boa's Kubernetes objects", () => {
  it('probes /healthz and /readyz on port 8080 and mounts the volume at BOA_DATA_DIR', () => {
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8080 }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
    expect(container.volumeMounts).toEqual([{ name: 'data', mountPath: BOA_DATA_DIR }]);
    expect(BOA_DATA_DIR).toBe('/var/lib/boa');
  });

  it('keeps boa in its Services while /readyz fails, the single replica being the only endpoint', () => {
    // Found in review: once ticks failed for three intervals, boa-internal lost its endpoint, and the
    // jobs' /progress and /complete calls, `boa status` and a scrape through a Service with it.
    const services = [
      internalServiceManifest(),
      serviceManifest({}),
      serviceManifest({ loadBalancer: { sourceRanges: ['203.0.113.0/24'] } }),
    ] as any[];
    for (const service of services) expect(service.spec.publishNotReadyAddresses).toBe(true);
  });

  it('gives the first tick the hung limit liveness gives any tick, and boot 5 minutes besides', () => {
    // Found in review: /healthz is 503 until the first tick ends, and the startup probe restarted boa
    // after 5 minutes, less than a tick may take on AWS's retries before it counts as hung.
    const startup = container.startupProbe;
    expect(startup.periodSeconds * startup.failureThreshold).toBe(5 * 60 + HUNG_AFTER_MS / 1000);
    expect(Number.isInteger(startup.failureThreshold)).toBe(true);
  });

  it("fails a rollout only after the startup probe's allowance, not at Kubernetes' 10 minutes", () => {
    // Found in a deploy review: with the default deadline, a first tick of 10 to 15 minutes, which the
    // startup probe allows, ended `kubectl rollout status` (deploy.md's check) in "exceeded its progress
    // deadline" while boa was still starting as designed.
    const startup = container.startupProbe;
    const startupSeconds = startup.periodSeconds * startup.failureThreshold;
    // The old pod's grace, a volume force-detached from a lost node (6 minutes) and the pull come first.
    const before = pod.terminationGracePeriodSeconds + 6 * 60;
    expect(deployment.spec.progressDeadlineSeconds).toBeGreaterThanOrEqual(startupSeconds + before);
    // deploy.md's rollout check waits for that deadline: no --timeout of its own that ends sooner.
    const checks = deployMd.split('\n').filter((line) => line.includes('rollout status deploy/boa'));
    expect(checks.length).toBeGreaterThan(0);
    for (const line of checks) expect(line).not.toMatch(/--timeout/);
  });

  it('binds to all interfaces inside the pod (the service defaults to 127.0.0.1)', () => {
    expect(container.env).toEqual(expect.arrayContaining([{ name: 'BOA_HOST', value: '0.0.0.0' }]));
  });

  it('meets the restricted Pod Security Standard its namespace enforces', () => {
    expect(namespaceManifest()).toMatchObject({
      metadata: { labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } },
    });
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    for (const c of pod.containers) {
      expect(c.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
    }
    expect(JSON.stringify(pod)).not.toMatch(/hostPath|hostNetwork|privileged/);
    // fsGroup lets the non-root `node` user write the freshly formatted volume.
    expect(pod.securityContext.fsGroup).toBe(1000);
  });

  it('stores data on an encrypted gp3 volume bound in the zone where boa is scheduled', () => {
    const [storageClass, claim] = storageManifests(10, 'daily') as any[];
    expect(storageClass).toMatchObject({
      provisioner: 'ebs.csi.aws.com',
      parameters: { type: 'gp3', encrypted: 'true' },
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    expect(claim.spec).toMatchObject({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '10Gi' } },
    });
  });

  it('offers the API as ClusterIP on 8080, or as an NLB on 80, or 443 with TLS', () => {
    const internal = serviceManifest({}) as any;
    expect(internal.spec).toMatchObject({ type: 'ClusterIP', ports: [{ port: 8080, targetPort: 'http' }] });
    expect(internal.spec.loadBalancerSourceRanges).toBeUndefined();

    const plain = serviceManifest({ loadBalancer: { sourceRanges: ['203.0.113.0/24'] } }) as any;
    expect(plain.metadata.annotations).toEqual({
      'service.beta.kubernetes.io/aws-load-balancer-type': 'nlb',
    });
    expect(plain.spec).toMatchObject({
      type: 'LoadBalancer',
      loadBalancerSourceRanges: ['203.0.113.0/24'],
      ports: [{ port: 80 }],
    });

    const arn = 'arn:aws:acm:us-east-1:123456789012:certificate/abc';
    const tls = serviceManifest({
      loadBalancer: { sourceRanges: ['203.0.113.0/24'], certificateArn: arn },
    }) as any;
    expect(tls.metadata.annotations['service.beta.kubernetes.io/aws-load-balancer-ssl-cert']).toBe(arn);
    expect(tls.spec.ports).toEqual([{ name: 'http', port: 443, targetPort: 'http', protocol: 'TCP' }]);
  });

  it('runs the device plugin with NVIDIA’s static-deployment settings', () => {
    const plugin = nvidiaDevicePluginManifest() as any;
    const spec = plugin.spec.template.spec;
    expect(spec.priorityClassName).toBe('system-node-critical');
    expect(spec.volumes[0].hostPath.path).toBe('/var/lib/kubelet/device-plugins');
    expect(spec.containers[0].env).toEqual([{ name: 'FAIL_ON_INIT_ERROR', value: 'false' }]);
  });
});
