import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AWS_CALLS,
  CDK_OWN_GRANTS,
  type Principal,
  PRINCIPAL_CODE,
  type Scope,
} from '../../infra/aws-calls.ts';
import { callsInFile, filesOf } from './aws-calls-scan.ts';
import { type Resource, synthTemplate } from './synth.ts';

// The mocked AWS of the other tests accepts any call: only here does a call the stack does not grant
// (AccessDenied in a real account) or a grant nothing sends show.

let template: Template;
beforeAll(() => {
  template = synthTemplate();
}, 120_000);

const principals = Object.keys(PRINCIPAL_CODE) as Principal[];
const key = (c: { principal: string; action: string }) => `${c.principal} ${c.action}`;

describe('the table of AWS calls (infra/aws-calls.ts) against the code', () => {
  it('lists every call the code sends, and none it no longer sends', () => {
    const found = new Map<string, string[]>();
    for (const principal of principals) {
      for (const call of filesOf(principal).flatMap(callsInFile)) {
        const k = key({ principal, action: call.action });
        found.set(k, [...(found.get(k) ?? []), call.file]);
      }
    }
    const listed = new Set(AWS_CALLS.map(key));
    const unlisted = [...found].filter(([k]) => !listed.has(k)).map(([k, files]) => `${k} (${files[0]})`);
    expect(unlisted, 'sent by the code, with no row (and so maybe no grant) in infra/aws-calls.ts').toEqual(
      [],
    );
    const stale = [...listed].filter((k) => !found.has(k));
    expect(stale, 'rows no code sends any more: remove them and their grants').toEqual([]);
    expect(AWS_CALLS.length, 'one row per principal and action').toBe(listed.size);
  });
});

describe('the grants in the synthesized template against the table', () => {
  it.each(principals)("%s's role is granted exactly its calls' actions, on exactly their scopes", (who) => {
    const granted = grantsOf(who);
    const wanted = new Map(
      [...AWS_CALLS, ...CDK_OWN_GRANTS]
        .filter((c) => c.principal === who)
        .map((c) => [c.action, [...c.scopes].sort()] as const),
    );
    expect(Object.fromEntries(granted)).toEqual(Object.fromEntries(wanted));
  });
});

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };

const getAtt = (value: unknown): [string, string] | undefined => {
  const att = (value as { 'Fn::GetAtt'?: [string, string] } | null)?.['Fn::GetAtt'];
  return Array.isArray(att) ? att : undefined;
};

function only(type: string, match: (r: Resource) => boolean): string {
  const ids = Object.entries(template.findResources(type) as Record<string, Resource>)
    .filter(([, r]) => match(r))
    .map(([id]) => id);
  expect(ids, type).toHaveLength(1);
  return ids[0]!;
}

/** The logical id of each principal's IAM role. */
function roleOf(who: Principal): string {
  const lambda = (describes: RegExp) => {
    const fnId = only('AWS::Lambda::Function', (r) => describes.test(String(r.Properties.Description ?? '')));
    return getAtt(template.toJSON().Resources[fnId].Properties.Role)![0];
  };
  switch (who) {
    case 'boa': {
      const assoc = only(
        'AWS::EKS::PodIdentityAssociation',
        (r) => r.Properties.ServiceAccount === 'boa' && r.Properties.Namespace === 'boa',
      );
      return getAtt(template.toJSON().Resources[assoc].Properties.RoleArn)![0];
    }
    case 'budgetGuard':
      return lambda(/^Budget guard/);
    case 'boundsHandler':
      return lambda(/^Sets the GPU node group min\/max size/);
    case 'tokenRotation':
      return lambda(/^Rotates boa's operator token/);
    case 'deployCalls': {
      // The CDK's one AwsCustomResource Lambda (its logical id is fixed by the CDK).
      const fnId = Object.keys(template.findResources('AWS::Lambda::Function')).filter((id) =>
        id.startsWith('AWS679f53fac002430cb0da5b7982bd2287'),
      );
      expect(fnId).toHaveLength(1);
      return getAtt(template.toJSON().Resources[fnId[0]!].Properties.Role)![0];
    }
  }
}

/** action -> the scopes it is granted on, from the inline policies attached to the principal's role. */
function grantsOf(who: Principal): Map<string, Scope[]> {
  const roleId = roleOf(who);
  const out = new Map<string, Set<string>>();
  for (const policy of Object.values(template.findResources('AWS::IAM::Policy')) as Resource[]) {
    if (
      !(policy.Properties.Roles as unknown[]).some(
        (r) => JSON.stringify(r) === JSON.stringify({ Ref: roleId }),
      )
    )
      continue;
    for (const st of policy.Properties.PolicyDocument.Statement as Statement[]) {
      expect(st.Effect, JSON.stringify(st)).toBe('Allow');
      for (const action of [st.Action].flat()) {
        for (const resource of [st.Resource].flat()) {
          if (!out.has(action)) out.set(action, new Set());
          out.get(action)!.add(scopeOf(resource, st.Condition));
        }
      }
    }
  }
  return new Map([...out].map(([a, s]) => [a, [...s].sort() as Scope[]]));
}

/** What a statement's resource and condition name, as a Scope; anything else is spelled out, and fails. */
function scopeOf(resource: unknown, condition: unknown): string {
  const resources = template.toJSON().Resources as Record<string, Resource>;
  const gpuId = only('AWS::EKS::Nodegroup', (r) => r.Properties.Labels?.['boa/node-role'] === 'gpu');
  const clusterId = only('AWS::EKS::Cluster', () => true);
  const secretId = only('AWS::SecretsManager::Secret', () => true);
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const text = JSON.stringify(resource);
  const spelled = `unknown scope: ${text} ${JSON.stringify(condition ?? {})}`;
  if (resource === '*') {
    if (condition === undefined) return 'any';
    if (same(condition, { StringEquals: { 'cloudwatch:namespace': 'boa' } })) return 'boaNamespace';
    const tags = (condition as { StringEquals?: Record<string, unknown> }).StringEquals ?? {};
    const clusterName = tags['autoscaling:ResourceTag/eks:cluster-name'];
    if (
      Object.keys(condition as object).length === 1 &&
      Object.keys(tags).length === 2 &&
      same(tags['autoscaling:ResourceTag/eks:nodegroup-name'], { 'Fn::GetAtt': [gpuId, 'NodegroupName'] }) &&
      (same(clusterName, { Ref: clusterId }) || clusterName === resources[clusterId]!.Properties.Name)
    )
      return 'gpuAsgByTags';
    return spelled;
  }
  if (condition !== undefined) return spelled;
  if (same(resource, { 'Fn::GetAtt': [gpuId, 'Arn'] })) return 'nodegroup';
  if (same(resource, { 'Fn::GetAtt': [clusterId, 'Arn'] })) return 'cluster';
  if (same(resource, { Ref: secretId })) return 'tokenSecret';
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join']?.[1];
  if (
    join?.[1] === ':nodegroup/' &&
    join[3] === '/*/*' &&
    same(join[0], { 'Fn::Select': [0, { 'Fn::Split': [':cluster/', { 'Fn::GetAtt': [clusterId, 'Arn'] }] }] })
  )
    return 'clusterNodegroups';
  return spelled;
}
