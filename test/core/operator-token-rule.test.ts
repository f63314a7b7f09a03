import { describe, expect, it } from 'vitest';
import { usableOperatorToken } from '../../src/core/operator-token-rule.ts';

describe('the operator token rule', () => {
  it('takes visible ASCII and Latin-1 (a hand-chosen token with an umlaut worked before the rule)', () => {
    expect(usableOperatorToken('Geheimnis-für-boa-2026')).toBe(true);
    expect(usableOperatorToken('abcDEF0123456789_-~!')).toBe(true);
  });

  it('refuses what no client can send: controls, spaces (a no-break space too), beyond Latin-1', () => {
    for (const token of [
      'abcdefghij\x1bklmnopqrstuvwxyz',
      'abcdefgh\x00ijklmnopqrstuvwxyz',
      'operator token 0123456789',
      'operator\u00a0token0123456789',
      'token-with-€-sign-0123456789',
      'short',
    ]) {
      expect(usableOperatorToken(token), JSON.stringify(token)).toBe(false);
    }
  });
});
