import * as iam from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { NAG_ACKNOWLEDGEMENTS } from '../../infra/nag.ts';
import { buildStack } from './synth.ts';

describe('cdk-nag AwsSolutions', () => {
  it('reports no finding that is not acknowledged in infra/nag.ts with a reason', () => {
    // Every optional resource in: the load balancer, the jobs' role association.
    const { app, stack } = buildStack({
      exposeApi: 'true',
      allowedApiCidrs: '203.0.113.0/24',
      jobsRoleArn: 'arn:aws:iam::123456789012:role/boa-checkpoints',
    });
    const report = new AwsSolutionsChecks(app).validateScope(stack);
    const findings = report.violations.flatMap((violation) =>
      violation.violatingResources.map((resource) => `${violation.ruleName} at ${resource.constructPath}`),
    );
    expect(findings).toEqual([]);
    expect(report.success).toBe(true);
  });

  it('gives every acknowledgement a reason', () => {
    for (const rules of Object.values(NAG_ACKNOWLEDGEMENTS)) {
      for (const rule of rules) {
        expect(rule.id).toMatch(/^(AwsSolutions-[A-Z]+\d+|CloudFormation-Validate::W\d+)/);
        expect(rule.reason.length).toBeGreaterThan(40);
      }
    }
  });

  it('is really checking: an unacknowledged wildcard policy added to the stack is reported', () => {
    const { app, stack } = buildStack();
    const role = new iam.Role(stack, 'Careless', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['s3:*'], resources: ['*'] }));
    const rules = new AwsSolutionsChecks(app).validateScope(stack).violations.map((v) => v.ruleName);
    expect(rules).toEqual(
      expect.arrayContaining(['AwsSolutions-IAM5[Action::s3:*]', 'AwsSolutions-IAM5[Resource::*]']),
    );
  });
});
