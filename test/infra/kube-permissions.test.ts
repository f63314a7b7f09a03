import { describe, expect, it } from 'vitest';
import { JOBS_RULES, NODE_RULES, type PolicyRule, STORAGE_CLASS_RULES } from '../../infra/k8s/jobs-rbac.ts';
import { kubeCalls } from './kube-calls-scan.ts';

// The scenarios of jobs-rbac.test.ts check the requests a run makes; this checks every request written in
// src/, run or not, so a new call (a code path no scenario takes) cannot ship without its grant: against
// the fake API server every request is allowed, in a real cluster it is 403.

const CLUSTER_RULES = [...NODE_RULES, ...STORAGE_CLASS_RULES];
const rulesFor = (namespaced: boolean) => (namespaced ? JOBS_RULES : CLUSTER_RULES);
const grants = (r: PolicyRule, group: string, resource: string, verb: string) =>
  r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb);

describe("boa's Kubernetes requests against the RBAC the CDK app deploys (infra/k8s/jobs-rbac.ts)", () => {
  const calls = kubeCalls();

  it('every request in the code is granted: in the jobs namespace by the Role, cluster-wide by the ClusterRole', () => {
    const denied = calls
      .filter((c) => !rulesFor(c.namespaced).some((r) => grants(r, c.group, c.resource, c.verb)))
      .map((c) => `${c.verb} ${c.resource}${c.namespaced ? '' : ' (cluster-wide)'}: ${c.what} in ${c.file}`);
    expect(denied).toEqual([]);
  });

  it('every verb granted is one a request in the code needs', () => {
    const unused: string[] = [];
    for (const namespaced of [true, false]) {
      for (const rule of rulesFor(namespaced)) {
        for (const group of rule.apiGroups) {
          for (const resource of rule.resources) {
            for (const verb of rule.verbs) {
              const used = calls.some(
                (c) =>
                  c.namespaced === namespaced &&
                  c.group === group &&
                  c.resource === resource &&
                  c.verb === verb,
              );
              if (!used) unused.push(`${verb} ${group}/${resource}${namespaced ? '' : ' (cluster-wide)'}`);
            }
          }
        }
      }
    }
    expect(unused).toEqual([]);
  });
});
