// Rotation of boa's operator token in Secrets Manager (Lambda, Node.js, AWS SDK v3 from the runtime): the
// four steps Secrets Manager calls a rotation function with, for a secret whose value is the token itself.
// - createSecret: a new random token (32 bytes, base64url) as the AWSPENDING version, unless it exists;
// - setSecret: nothing: boa is not told, it re-reads the secret (on a timer and on an unknown token);
// - testSecret: the pending value is a usable token;
// - finishSecret: AWSCURRENT moves to the new version (the old one becomes AWSPREVIOUS). boa accepts the
//   previous token for its overlap (tokenOverlapSeconds), so clients have time to fetch the new one.
// Every step may be called again (Secrets Manager retries): each checks what is done first.

import { randomBytes } from 'node:crypto';
import console from 'node:console';
import { SecretsManager } from '@aws-sdk/client-secrets-manager';

export function newToken() {
  return randomBytes(32).toString('base64url');
}

// boa's own rule (src/core/operator-token-rule.ts), restated: this Lambda ships as one file. A version
// it lets through that boa then refuses would stop boa at its next start (found in review).
const usable = (token) =>
  typeof token === 'string' && token.length >= 16 && /^[\x21-\x7e\xa1-\xff]+$/.test(token);

/** One rotation step for the version ClientRequestToken of SecretId. Returns what was done. */
export async function rotate(client, { SecretId, ClientRequestToken, Step }) {
  const meta = await client.describeSecret({ SecretId });
  if (!meta.RotationEnabled) throw new Error(`secret ${SecretId} is not enabled for rotation`);
  const stages = meta.VersionIdsToStages?.[ClientRequestToken];
  if (!stages) throw new Error(`version ${ClientRequestToken} is not a version of ${SecretId}`);
  if (stages.includes('AWSCURRENT')) return 'already current';
  if (!stages.includes('AWSPENDING'))
    throw new Error(`version ${ClientRequestToken} of ${SecretId} is not AWSPENDING`);

  switch (Step) {
    case 'createSecret': {
      try {
        await client.getSecretValue({ SecretId, VersionId: ClientRequestToken, VersionStage: 'AWSPENDING' });
        return 'pending value exists';
      } catch (error) {
        if (error?.name !== 'ResourceNotFoundException') throw error;
      }
      await client.putSecretValue({
        SecretId,
        ClientRequestToken,
        SecretString: newToken(),
        VersionStages: ['AWSPENDING'],
      });
      return 'pending value created';
    }
    case 'setSecret':
      return 'nothing to set: boa re-reads the secret';
    case 'testSecret': {
      const pending = await client.getSecretValue({
        SecretId,
        VersionId: ClientRequestToken,
        VersionStage: 'AWSPENDING',
      });
      if (!usable(pending.SecretString)) throw new Error(`pending value of ${SecretId} is no usable token`);
      return 'pending value tested';
    }
    case 'finishSecret': {
      const current = Object.entries(meta.VersionIdsToStages ?? {}).find(([, s]) => s.includes('AWSCURRENT'));
      await client.updateSecretVersionStage({
        SecretId,
        VersionStage: 'AWSCURRENT',
        MoveToVersionId: ClientRequestToken,
        ...(current ? { RemoveFromVersionId: current[0] } : {}),
      });
      return 'rotated';
    }
    default:
      throw new Error(`unknown rotation step ${Step}`);
  }
}

export async function handler(event) {
  const done = await rotate(new SecretsManager({}), event);
  // Never the token: the secret, the version and the step.
  console.log(
    JSON.stringify({ secret: event.SecretId, version: event.ClientRequestToken, step: event.Step, done }),
  );
  return done;
}
