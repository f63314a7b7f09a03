/**
 * Yes/no BOA_* variables (BOA_ROLLBACK_TO_COPY): 1, true or yes in any case; 0, false or no are off (a
 * `kubectl set env ...=0` must not crash-loop the pod); any other value refused.
 */
import { describe, expect, it } from 'vitest';
import { envFlag } from '../../src/service/config-env.ts';
import { ConfigError } from '../../src/service/config.ts';

describe('envFlag', () => {
  it('1, true and yes in any case are yes; unset or empty is no', () => {
    for (const value of ['1', 'true', 'TRUE', 'True', 'yes', 'Yes', ' yes ']) {
      expect(envFlag({ BOA_ROLLBACK_TO_COPY: value }, 'BOA_ROLLBACK_TO_COPY'), value).toBe(true);
    }
    expect(envFlag({}, 'BOA_ROLLBACK_TO_COPY')).toBe(false);
    expect(envFlag({ BOA_ROLLBACK_TO_COPY: '' }, 'BOA_ROLLBACK_TO_COPY')).toBe(false);
    for (const value of ['0', 'false', 'No', 'FALSE']) {
      expect(envFlag({ BOA_ROLLBACK_TO_COPY: value }, 'BOA_ROLLBACK_TO_COPY'), value).toBe(false);
    }
  });

  it('any other value is refused, naming the variable and the values it takes', () => {
    for (const value of ['on', 'off', 'y', '2']) {
      const read = () => envFlag({ BOA_ROLLBACK_TO_COPY: value }, 'BOA_ROLLBACK_TO_COPY');
      expect(read).toThrow(ConfigError);
      expect(read).toThrow(
        `BOA_ROLLBACK_TO_COPY must be 1, true or yes (on), 0, false or no (off), or unset, got "${value}"`,
      );
    }
  });
});
