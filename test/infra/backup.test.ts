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
