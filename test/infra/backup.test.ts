/**
 * AWS Backup selects boa's volume by a tag, account-wide: a second stack in the same account and
 * region gets its own tag value (context `backupTag`), on the volume and in its selection alike.
 */
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, it } from 'vitest';
import { BoaBackup } from '../../infra/backup.ts';
import { BACKUP_TAG_KEY, storageManifests } from '../../infra/k8s/boa.ts';

describe('backup selection', () => {
  it.each(['daily', 'staging'])('the volume is tagged and selected by boa-backup=%s', (backupTag) => {
    const stack = new Stack(new App(), 'S');
    new BoaBackup(stack, 'Backup', { key: new kms.Key(stack, 'Key'), backupTag });
    Template.fromStack(stack).hasResourceProperties('AWS::Backup::BackupSelection', {
      BackupSelection: {
        ListOfTags: [
          { ConditionKey: BACKUP_TAG_KEY, ConditionValue: backupTag, ConditionType: 'STRINGEQUALS' },
        ],
      },
    });
    const [storageClass] = storageManifests(10, backupTag) as Array<{ parameters: Record<string, string> }>;
    expect(storageClass!.parameters.tagSpecification_1).toBe(`boa-backup=${backupTag}`);
  });
});

/**
 * The vault is retained when its stack is deleted (it holds the recovery points), so its name must never
 * be one a later stack would ask for again: not a second stack in the same account and region (another
 * `stackName`, the same construct path), nor the same stack deployed again after `cdk destroy`.
 */
describe('backup vault name', () => {
  /** The vault's name as CloudFormation resolves it, for a stack with this name and stack ID. */
  function vaultName(stackName: string, stackId: string): string {
    const stack = new Stack(new App(), 'Boa', { stackName });
    new BoaBackup(stack, 'Backup', { key: new kms.Key(stack, 'Key'), backupTag: 'daily' });
    const [vault] = Object.values(Template.fromStack(stack).findResources('AWS::Backup::BackupVault'));
    const pseudo: Record<string, string> = { 'AWS::StackId': stackId, 'AWS::StackName': stackName };
    // The few intrinsics a name can use; anything else fails the test.
    const resolve = (value: unknown): any => {
      if (typeof value === 'string') return value;
      const [fn, args] = Object.entries(value as Record<string, any>)[0]!;
      if (fn === 'Ref' && pseudo[args] !== undefined) return pseudo[args];
      if (fn === 'Fn::Join') return args[1].map(resolve).join(args[0]);
      if (fn === 'Fn::Split') return resolve(args[1]).split(args[0]);
      if (fn === 'Fn::Select') return resolve(args[1])[args[0]];
      throw new Error(`cannot resolve ${JSON.stringify(value)}`);
    };
    const name = resolve(vault!.Properties.BackupVaultName) as string;
    expect(name).toMatch(/^[a-zA-Z0-9_-]{2,50}$/); // AWS Backup's rule for vault names
    return name;
  }
  const id = (name: string, uuid: string) =>
    `arn:aws:cloudformation:us-east-1:123456789012:stack/${name}/${uuid}`;

  it('differs between two stacks of the app in one account and region', () => {
    expect(vaultName('boa', id('boa', '51af3dc0-da77-11e4-872e-1234567db123'))).not.toBe(
      vaultName('staging', id('staging', '7d1e2b40-da78-11e4-9a1c-0a1b2c3d4e5f')),
    );
  });

  it('differs when the same stack is deployed again after a destroy left the old vault behind', () => {
    expect(vaultName('boa', id('boa', '51af3dc0-da77-11e4-872e-1234567db123'))).not.toBe(
      vaultName('boa', id('boa', 'c0ffee00-1234-11ef-8000-abcdefabcdef')),
    );
  });
});
