#!/usr/bin/env node
// The CDK app (cdk.json runs it with tsx): one stack that deploys boa and its GPU node group.
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { BoaStack } from './boa-stack.ts';
import { ContextError, readAppConfig } from './context.ts';

const app = new App();
try {
  const config = readAppConfig(app.node, process.env);
  new BoaStack(app, 'Boa', {
    stackName: config.stackName,
    // The account stays unresolved without credentials (synth works offline); the region is concrete.
    env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: config.region },
    description: 'boa: budget-aware GPU rental for ML training (EKS, g4dn node group, boa service)',
    config,
  });
  const nag = app.node.tryGetContext('nag');
  // `-c nag=true`: run the cdk-nag AwsSolutions pack as a synth-time validation (the tests always do).
  if (nag === true || nag === 'true')
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
} catch (error) {
  if (!(error instanceof ContextError)) throw error;
  console.error(`boa: ${error.message}`);
  process.exit(1);
}
