import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/service/config.ts';
import { fromSource } from '../../src/service/config-sources.ts';

describe('an unknown setting among other errors', () => {
  it('is reported first, and the errors it caused are kept after it (found in a newcomer trial)', () => {
    const file = fromSource({ kind: 'file', path: 'boa.json' }, { aws: { regon: 'us-east-1' } });
    let message = '';
    try {
      resolveConfig(file);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(
      /^invalid configuration: unknown setting "aws\.regon" in boa\.json \(did you mean aws\.region\?\); /,
    );
    expect(message).toMatch(/aws\.clusterName/);
    expect(message).toMatch(/aws\.nodegroupName/);
  });
});
