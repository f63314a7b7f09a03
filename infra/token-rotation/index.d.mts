// Types for index.mjs (the Lambda ships as plain JavaScript so synth needs no bundler).
import type { SecretsManager } from '@aws-sdk/client-secrets-manager';

export interface RotationEvent {
  SecretId: string;
  ClientRequestToken: string;
  Step: 'createSecret' | 'setSecret' | 'testSecret' | 'finishSecret';
}

export function newToken(): string;
export function rotate(client: SecretsManager, event: RotationEvent): Promise<string>;
export function handler(event: RotationEvent): Promise<string>;
