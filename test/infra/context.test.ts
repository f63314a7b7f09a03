import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { CONTEXT_KEYS } from '../../infra/context-keys.ts';
import { ContextError, DEFAULTS, checkContextKeys, readAppConfig, readConfig } from '../../infra/context.ts';
import { instanceFamily, NVIDIA_X86_FAMILIES } from '../../infra/instance-families.ts';
import { knownInstanceTypes } from '../../src/core/instance-types.ts';

/** The two values every deployment must name; a test may override either (or blank it). */
const REQUIRED = {
  allowedApiCidrs: '203.0.113.0/24',
  adminPrincipalArns: 'arn:aws:iam::123456789012:role/ops',
};
const from = (context: Record<string, unknown>, env: Record<string, string> = {}) =>
  readConfig((key) => ({ ...REQUIRED, ...context })[key], env);

describe('readConfig', () => {
  it('has documented defaults: g4dn.12xlarge (4 GPUs), 4 nodes at most, us-east-1, no budget, API internal', () => {
    expect(from({})).toEqual({
      stackName: 'boa',
      clusterName: 'boa',
      region: 'us-east-1',
      maxGpuNodes: 4,
      instanceType: 'g4dn.12xlarge',
      gpusPerNode: 4,
      gpuNodeDiskGiB: 200,
      allowedApiCidrs: ['203.0.113.0/24'],
      adminPrincipalArns: ['arn:aws:iam::123456789012:role/ops'],
      exposeApi: false,
      jobsNamespace: 'boa-jobs',
      budgetGuard: true,
      guardMinutes: 15,
      backupTag: 'daily',
    });
    expect(DEFAULTS.instanceType).toBe('g4dn.12xlarge');
  });

  it('takes -c strings and cdk.json values alike', () => {
    const viaCli = from({
      budget: '40',
      maxGpuNodes: '8',
      instanceType: 'g4dn.xlarge',
      region: 'eu-west-1',
      allowedApiCidrs: '203.0.113.0/24, 198.51.100.7/32',
      exposeApi: 'true',
      availabilityZones: 'eu-west-1a,eu-west-1b',
    });
    const viaJson = from({
      budget: 40,
      maxGpuNodes: 8,
      instanceType: 'g4dn.xlarge',
      region: 'eu-west-1',
      allowedApiCidrs: ['203.0.113.0/24', '198.51.100.7/32'],
      exposeApi: true,
      availabilityZones: ['eu-west-1a', 'eu-west-1b'],
    });
    expect(viaCli).toEqual(viaJson);
    expect(viaCli).toMatchObject({
      budget: 40,
      maxGpuNodes: 8,
      gpusPerNode: 1,
      allowedApiCidrs: ['203.0.113.0/24', '198.51.100.7/32'],
      availabilityZones: ['eu-west-1a', 'eu-west-1b'],
    });
  });

  it('takes an ACM certificate of the region it deploys to', () => {
    const arn = 'arn:aws:acm:eu-west-1:123456789012:certificate/0a1b2c3d-0000-1111-2222-333344445555';
    expect(from({ exposeApi: 'true', region: 'eu-west-1', apiCertificateArn: arn }).apiCertificateArn).toBe(
      arn,
    );
  });

  it('falls back to the CLI default region before us-east-1', () => {
    expect(from({}, { CDK_DEFAULT_REGION: 'us-west-2' }).region).toBe('us-west-2');
    expect(from({ region: 'eu-central-1' }, { CDK_DEFAULT_REGION: 'us-west-2' }).region).toBe('eu-central-1');
  });

  it('needs gpusPerNode for instance types outside its table', () => {
    expect(() => from({ instanceType: 'p4d.24xlarge' })).toThrow(/gpusPerNode/);
    expect(from({ instanceType: 'p4d.24xlarge', gpusPerNode: '8' }).gpusPerNode).toBe(8);
  });

  // boa refuses to start with a gpusPerNode its instance type contradicts: caught at synth, not by a
  // pod that fails to start after the deploy.
  it('refuses a gpusPerNode that contradicts a type in its table, naming both', () => {
    expect(from({ instanceType: 'g4dn.metal', gpusPerNode: '8' }).gpusPerNode).toBe(8);
    expect(() => from({ instanceType: 'g4dn.12xlarge', gpusPerNode: '8' })).toThrow(
      /context "gpusPerNode" is 8, but g4dn\.12xlarge has 4 GPUs: leave it unset or set it to 4/,
    );
  });

  it('takes a node price for the $ figures, for types whose price boa does not know or other regions', () => {
    expect(from({})).not.toHaveProperty('nodePricePerHour');
    expect(from({ nodePricePerHour: '4.89' }).nodePricePerHour).toBe(4.89);
    expect(from({ nodePricePerHour: 4.89 }).nodePricePerHour).toBe(4.89);
  });

  // The GPU node group runs the EKS AL2023 NVIDIA x86_64 AMI: a type it cannot run would be paid for while
  // unusable (p2, g3: NVIDIA, but not on the AMI's list) or fail the deploy only when EKS creates the group.
  it.each([
    'p2.xlarge',
    'p2.16xlarge',
    'g3.4xlarge',
    'g3s.xlarge',
    'g4ad.xlarge',
    'g5g.xlarge',
    'p6e-gb200.36xlarge',
    'p6e-gb300.36xlarge',
    'c7g.large',
    'inf2.xlarge',
    'm5.large',
  ])(
    'refuses %s, whose family the NVIDIA x86 AMI does not support, even with gpusPerNode',
    (instanceType) => {
      const family = instanceType.split('.')[0]!;
      expect(() => from({ instanceType, gpusPerNode: '1' })).toThrow(ContextError);
      expect(() => from({ instanceType, gpusPerNode: '1' })).toThrow(
        new RegExp(
          `context "instanceType" is "${instanceType.replace('.', '\\.')}", whose family ${family} .*` +
            'AL2023 NVIDIA x86_64.*allowed families: p6-b300, p6-b200, p5, .*g5, g4dn$',
        ),
      );
    },
  );

  it.each(['g6f.large', 'gr6f.4xlarge'])(
    'refuses %s, whose instances have a fraction of one GPU',
    (instanceType) => {
      expect(() => from({ instanceType, gpusPerNode: '1' })).toThrow(
        /instances have a fraction of one GPU: boa counts whole GPUs; allowed families: p6-b300/,
      );
    },
  );

  // The families boa's table covers (g4dn, g5, g6) are taken by their table types (below).
  const tableFamilies = new Set(knownInstanceTypes().map(instanceFamily));
  it.each(NVIDIA_X86_FAMILIES.filter((f) => !tableFamilies.has(f)).map((family) => `${family}.48xlarge`))(
    "takes %s, of a family on the AMI's list, with gpusPerNode",
    (instanceType) => {
      expect(from({ instanceType, gpusPerNode: '8' }).instanceType).toBe(instanceType);
    },
  );

  // Synth passed them with gpusPerNode; EKS refused the type only once the cluster was up, some 20
  // minutes into the first deploy, which then rolled back.
  it.each(['g4dn.12xlarg', 'g4dn.48xlarge', 'g5.metal', 'g6.32xlarge'])(
    "refuses %s, not a type of a family boa's table covers whole, naming the family's types",
    (instanceType) => {
      const family = instanceType.split('.')[0]!;
      const types = knownInstanceTypes().filter((t) => instanceFamily(t) === family);
      expect(() => from({ instanceType, gpusPerNode: '4' })).toThrow(
        `context "instanceType" is "${instanceType}", which is not an instance type of family ${family}; ` +
          `its types are ${types.join(', ')}`,
      );
    },
  );

  it.each(knownInstanceTypes())("takes %s, a type of boa's table", (instanceType) => {
    expect(from({ instanceType }).instanceType).toBe(instanceType);
  });

  it('reads a dashed family whole: p6-b200 is on the list, p6e-gb200 (Grace, Arm) is not', () => {
    expect(instanceFamily('p6-b200.48xlarge')).toBe('p6-b200');
    expect(instanceFamily('p6e-gb200.36xlarge')).toBe('p6e-gb200');
    expect(NVIDIA_X86_FAMILIES).not.toContain('p6e-gb200');
  });

  // boa's own table (gpusPerNode defaults, prices) must not name a type the stack would refuse.
  it("has every type of the app's GPU table in a supported family", () => {
    for (const instanceType of knownInstanceTypes()) {
      expect(NVIDIA_X86_FAMILIES).toContain(instanceFamily(instanceType));
    }
  });

  it.each([
    [{ budget: '0' }, /budget/],
    // Below one whole node, or above PUT /v1/budget's bound, the service refuses to start.
    [
      { budget: '3' },
      /context "budget" must be a number of GPU-hours per hour from 4 \(one g4dn\.12xlarge node, paid whole\) to 100000, got 3/,
    ],
    [{ budget: '1e6' }, /context "budget" must be .* to 100000, got 1000000/],
    [{ backupTag: 'a=b' }, /"backupTag" must be 1 to 128 letters/],
    [{ backupTag: 'x'.repeat(129) }, /backupTag/],
    [{ budget: 'lots' }, /budget/],
    [{ maxGpuNodes: '0' }, /maxGpuNodes/],
    [
      { nodePricePerHour: '0' },
      /context "nodePricePerHour" must be a positive number of dollars per node-hour, got 0/,
    ],
    [{ nodePricePerHour: 'cheap' }, /context "nodePricePerHour" must be a number, got "cheap"/],
    [{ maxGpuNodes: '2.5' }, /maxGpuNodes/],
    [{ instanceType: 'big gpu' }, /instanceType/],
    [{ region: 'mars-1' }, /region/],
    [{ allowedApiCidrs: '0.0.0.0' }, /allowedApiCidrs/],
    [{ allowedApiCidrs: '300.1.1.1/8' }, /allowedApiCidrs/],
    [{ exposeApi: 'true', allowedApiCidrs: '' }, /"allowedApiCidrs" is required/],
    // Required by every cdk command, bootstrap and destroy too: the message says where to put it once.
    [
      { allowedApiCidrs: '' },
      /"allowedApiCidrs" is required.*never open to 0\.0\.0\.0\/0.*bootstrap and destroy.*cdk\.json/,
    ],
    [
      { adminPrincipalArns: '' },
      /"adminPrincipalArns" is required.*account root is never trusted.*bootstrap and destroy.*cdk\.json/,
    ],
    [{ adminPrincipalArns: 'arn:aws:iam::123456789012:root' }, /adminPrincipalArns/],
    [{ exposeApi: 'yes' }, /exposeApi/],
    [{ apiCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/x' }, /exposeApi=true/],
    // The load balancer can use a certificate of its own region only: another region's (or a typo's) would
    // deploy fine and leave the Service without a load balancer, the reason only in its events.
    [
      { exposeApi: 'true', apiCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/x' },
      /"apiCertificateArn" must be an ACM certificate in us-east-1.*eu-west-1/,
    ],
    [
      { exposeApi: 'true', apiCertificateArn: 'arn:aws:acm:us-east-1:123456789012:x' },
      /"apiCertificateArn" must be an ACM certificate in us-east-1/,
    ],
    [{ availabilityZones: 'us-east-1a' }, /availabilityZones/],
    [{ availabilityZones: 'eu-west-1a,eu-west-1b' }, /availabilityZones/],
    // EKS wants its subnets in two different zones: one zone twice, or the region's own name, fails only
    // at deploy time, once the VPC is up.
    [{ availabilityZones: 'us-east-1a,us-east-1a' }, /"availabilityZones" must name two different zones/],
    [{ availabilityZones: 'us-east-1,us-east-1b' }, /"availabilityZones" must name two different zones/],
    [{ clusterName: '1boa' }, /clusterName/],
    // Found in a deploy review: a name of only allowed characters but too long was refused as if its
    // characters were wrong, the limit unsaid.
    [{ stackName: `boa-${'x'.repeat(60)}` }, /"stackName" must be 1 to 63 characters.*\(64 characters\)/],
    [{ clusterName: 'b'.repeat(70) }, /"clusterName" must be 1 to 63 characters.*\(70 characters\)/],
    [{ alarmEmail: 'not-an-address' }, /alarmEmail/],
    [{ adminPrincipalArn: 'alice' }, /adminPrincipalArns/],
    [{ jobsNamespace: 'boa' }, /"jobsNamespace" must be .*not boa's \("boa"\)/],
    // Found in review: the stack labels the jobs' namespace (baseline Pod Security) and denies all
    // ingress to its pods, so kube-system would refuse the node DaemonSets' pods and cut off CoreDNS.
    [
      { jobsNamespace: 'kube-system' },
      /"jobsNamespace" must be .*kube-\* system namespace, got "kube-system"/,
    ],
    [{ jobsNamespace: 'kube-node-lease' }, /jobsNamespace/],
    [{ jobsNamespace: 'default' }, /jobsNamespace/],
  ])('rejects %j', (context, message) => {
    expect(() => from(context)).toThrow(ContextError);
    expect(() => from(context)).toThrow(message);
  });
});

describe('jobsRoleArn and the account deployed to', () => {
  const role = (account: string) => `arn:aws:iam::${account}:role/boa-checkpoints`;

  it("refuses another account's role once the account is known, naming both", () => {
    expect(() =>
      from({ jobsRoleArn: role('444455556666') }, { CDK_DEFAULT_ACCOUNT: '111122223333' }),
    ).toThrow(
      'context "jobsRoleArn" is a role of account 444455556666, but the stack deploys to account 111122223333',
    );
  });

  it("takes the account's own role, and any role while the account is unknown (synth offline)", () => {
    const own = from({ jobsRoleArn: role('111122223333') }, { CDK_DEFAULT_ACCOUNT: '111122223333' });
    expect(own.jobsRoleArn).toBe(role('111122223333'));
    expect(from({ jobsRoleArn: role('444455556666') }).jobsRoleArn).toBe(role('444455556666'));
  });
});

describe('context keys', () => {
  const cdkJson = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context: Record<string, unknown>;
  };
  // What the CLI adds to cdk.json's context on a plain `cdk synth` (seen in a synth's getAllContext()).
  const cli = {
    'aws:cdk:enable-path-metadata': true,
    'aws:cdk:enable-asset-metadata': true,
    'aws:cdk:version-reporting': true,
    'aws:cdk:bundling-stacks': ['**'],
  };
  const app = (context: Record<string, unknown>) =>
    new App({ context: { ...cdkJson.context, ...cli, ...REQUIRED, ...context } });

  it("takes cdk.json's own context, the CLI's keys and cdk.context.json's lookups", () => {
    const lookups = {
      'availability-zones:account=123456789012:region=us-east-1': ['us-east-1a', 'us-east-1b'],
      'ami:account=123456789012:filters.name.0=x:region=us-east-1': 'ami-0123',
      'acknowledged-issue-numbers': [12345],
    };
    expect(readAppConfig(app({ ...lookups, maxGpuNodes: '16', nag: 'true' }).node).maxGpuNodes).toBe(16);
  });

  // A misspelled key was ignored and its default deployed: -c maxGPUNodes=16 gave a node group of 4.
  it.each([
    ['maxGPUNodes', 'maxGpuNodes'],
    ['instancetype', 'instanceType'],
    ['budgett', 'budget'],
    ['max-gpu-nodes', 'maxGpuNodes'],
    ['allowedApiCidr', 'allowedApiCidrs'],
  ])('refuses the unknown key %s, naming %s and the known keys', (key, closest) => {
    expect(() => readAppConfig(app({ [key]: '16' }).node)).toThrow(ContextError);
    expect(() => readAppConfig(app({ [key]: '16' }).node)).toThrow(
      `unknown context key "${key}" (did you mean "${closest}"?); it would be ignored and its default ` +
        `deployed. Known keys: ${CONTEXT_KEYS.join(', ')}`,
    );
  });

  it('knows every key readConfig reads', () => {
    const read = new Set<string>();
    readConfig((key) => {
      read.add(key);
      return (REQUIRED as Record<string, unknown>)[key];
    });
    expect([...read].filter((key) => !CONTEXT_KEYS.includes(key))).toEqual([]);
    expect(() => checkContextKeys(read)).not.toThrow();
  });

  // adminPrincipalArn was accepted but missing from the table (found in a deploy review).
  it("documents every key in deploy.md's settings table", () => {
    const deployMd = readFileSync(new URL('../../docs/deploy.md', import.meta.url), 'utf8');
    const documented = deployMd
      .split('\n')
      .map((line) => /^\| `([A-Za-z]+)` \|/.exec(line)?.[1])
      .filter((key) => key !== undefined);
    expect(CONTEXT_KEYS.filter((key) => !documented.includes(key))).toEqual([]);
  });
});
