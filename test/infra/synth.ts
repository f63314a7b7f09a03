// Builds the stack the way `cdk synth` does (cdk.json's feature flags, context from a plain object), without
// staging assets (faster; nothing is built or uploaded either way).
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { BoaStack } from '../../infra/boa-stack.ts';
import { readAppConfig } from '../../infra/context.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cdkJson = JSON.parse(readFileSync(path.join(root, 'cdk.json'), 'utf8')) as {
  context: Record<string, unknown>;
};

/** What every deployment must name (no default would be safe); tests may override them. */
export const REQUIRED_CONTEXT = {
  allowedApiCidrs: '203.0.113.0/24',
  adminPrincipalArns: 'arn:aws:iam::123456789012:role/ops',
};

export function buildStack(context: Record<string, unknown> = {}): { app: App; stack: BoaStack } {
  const app = new App({
    context: { ...cdkJson.context, 'aws:cdk:disable-asset-staging': true, ...REQUIRED_CONTEXT, ...context },
  });
  const config = readAppConfig(app.node, {});
  const stack = new BoaStack(app, 'Boa', {
    stackName: config.stackName,
    env: { region: config.region },
    config,
  });
  return { app, stack };
}

export function synthTemplate(context: Record<string, unknown> = {}): Template {
  return Template.fromStack(buildStack(context).stack);
}

export type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[] };

/** The Kubernetes objects of one Custom::AWSCDK-EKS-KubernetesResource, tokens left as CloudFormation JSON. */
export function manifestObjects(resource: Resource): any[] {
  const manifest = resource.Properties.Manifest;
  if (typeof manifest === 'string') return JSON.parse(manifest);
  // With tokens inside, the manifest is an Fn::Join of string pieces and intrinsic functions.
  const pieces: unknown[] = manifest['Fn::Join'][1];
  // Tokens sit inside JSON strings: write each as ${<its JSON>}, escaped for the surrounding string.
  const token = (piece: unknown) => JSON.stringify(`\${${JSON.stringify(piece)}}`).slice(1, -1);
  const text = pieces.map((piece) => (typeof piece === 'string' ? piece : token(piece))).join('');
  return JSON.parse(text);
}

/** Every Kubernetes object the stack applies, by kind/name. */
export function kubernetesObjects(template: Template): Map<string, any> {
  const out = new Map<string, any>();
  for (const resource of Object.values(template.findResources('Custom::AWSCDK-EKS-KubernetesResource'))) {
    for (const object of manifestObjects(resource as Resource))
      out.set(`${object.kind}/${object.metadata.name}`, object);
  }
  return out;
}
