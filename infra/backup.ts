import { Aws, Duration, Fn, RemovalPolicy } from 'aws-cdk-lib';
import * as backup from 'aws-cdk-lib/aws-backup';
import * as events from 'aws-cdk-lib/aws-events';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import { BACKUP_TAG_KEY } from './k8s/boa.ts';

/**
 * Daily AWS Backup snapshots of boa's EBS volume (selected by its tag), kept 7 days in a vault
 * encrypted with the cluster's key and retained if the stack is deleted. docs/security.md has the
 * restore path: restore the snapshot to a volume, bind it to a PersistentVolume for boa-data.
 */
export class BoaBackup extends Construct {
  readonly vault: backup.BackupVault;
  readonly plan: backup.BackupPlan;

  constructor(scope: Construct, id: string, props: { readonly key: kms.IKey; readonly backupTag: string }) {
    super(scope, id);
    this.vault = new backup.BackupVault(this, 'Vault', {
      // Named after the stack's ID (its UUID, new for every stack created): the vault outlives its stack,
      // and the CDK's default name (from the construct path, the same for every stack of this app) would
      // make a second stack in the account and region, or this one deployed again after `cdk destroy`,
      // fail on "already exists".
      backupVaultName: Fn.join('-', ['boa-backup', Fn.select(2, Fn.split('/', Aws.STACK_ID))]),
      encryptionKey: props.key,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.plan = new backup.BackupPlan(this, 'Plan', { backupVault: this.vault });
    this.plan.addRule(
      new backup.BackupPlanRule({
        ruleName: 'daily-7-days',
        scheduleExpression: events.Schedule.cron({ hour: '3', minute: '0' }),
        deleteAfter: Duration.days(7),
      }),
    );
    this.plan.addSelection('BoaVolume', {
      resources: [backup.BackupResource.fromTag(BACKUP_TAG_KEY, props.backupTag)],
    });
  }
}
