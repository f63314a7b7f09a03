import { CfnResource, type Stack } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';

/**
 * Gives every Lambda function of the stack that has no log group of its own (LoggingConfig.LogGroup) one
 * the stack owns (30 days), so `cdk destroy` leaves no log group behind.
 *
 * Two kinds had none. The CDK's provider that closes the VPC's default security group writes to the log
 * group Lambda creates by itself, which no stack deletes. The kubectl provider's two functions have
 * groups named after them, but such a group depends on its function and nothing depends on it: the
 * deletion removes it at once, while the Kubernetes objects are still being deleted through those
 * functions, and their logs create it again, outside the stack, kept forever. A group the function
 * names is deleted only after the function, so after everything the function served.
 */
export function ownLambdaLogGroups(stack: Stack): void {
  const functions = stack.node
    .findAll()
    .filter(
      (c): c is CfnResource => CfnResource.isCfnResource(c) && c.cfnResourceType === 'AWS::Lambda::Function',
    );
  for (const fn of functions) {
    if (hasOwnLogGroup(fn)) continue;
    const group = new logs.LogGroup(fn.node.scope!, `${fn.node.id}Logs`, {
      retention: logs.RetentionDays.ONE_MONTH,
    });
    fn.addPropertyOverride('LoggingConfig.LogGroup', group.logGroupName);
  }
}

function hasOwnLogGroup(fn: CfnResource): boolean {
  // The CDK's own providers (CustomResourceProvider) are plain CfnResources: they never set one.
  if (!(fn instanceof lambda.CfnFunction)) return false;
  const config = fn.loggingConfig as lambda.CfnFunction.LoggingConfigProperty | undefined;
  return config?.logGroup !== undefined;
}
