/**
 * The CDK CLI builds the app for every command, `cdk bootstrap` and `cdk destroy` included, and the app
 * refuses to build without its two required settings (infra/context.ts). So every cdk command that
 * docs/deploy.md tells a user to run carries them, or the user could not bootstrap or tear down as
 * written (found in review: both commands once had no settings and exited 1 before any AWS call).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REQUIRED = ['adminPrincipalArns=', 'allowedApiCidrs='];
const BUILDS_THE_APP = /^npx cdk (bootstrap|deploy|destroy|synth|diff)\b/;

/** Shell commands of the doc's sh blocks, with their continuation lines joined. */
function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const joined = (block[1] as string).replace(/\\\n\s*/g, ' ');
    for (const line of joined.split('\n')) if (line.trim()) commands.push(line.trim());
  }
  return commands;
}

describe("docs/deploy.md's cdk commands", () => {
  const commands = shellCommands(readFileSync(resolve(import.meta.dirname, '../../docs/deploy.md'), 'utf8'));
  const cdk = commands.filter((c) => BUILDS_THE_APP.test(c));

  it('include bootstrap, deploy and destroy', () => {
    const verbs = new Set(cdk.map((c) => (BUILDS_THE_APP.exec(c) as RegExpExecArray)[1]));
    for (const verb of ['bootstrap', 'deploy', 'destroy']) expect(verbs).toContain(verb);
  });

  it('each carries both settings the app requires', () => {
    for (const command of cdk) for (const setting of REQUIRED) expect(command).toContain(setting);
  });
});
