import { describe, expect, it } from 'vitest';
import { notRestartable } from '../../src/cloud/command-exits.ts';

describe('exits a restart cannot help', () => {
  it('are 127 and 126 only, saying why not restarted and where to look', () => {
    expect(notRestartable(127, 'in the image x:1')).toBe(
      "not restarted: exit 127 means a command the job ran was not found, which fails the same way at every start; check the command and the PATH in the image x:1 (the job's output names the command), then submit it again",
    );
    expect(notRestartable(126, 'on this machine')).toContain(
      'exit 126 means a command the job ran is not executable, which fails the same way at every start; check the command and the PATH on this machine',
    );
    for (const code of [0, 1, 2, 125, 128, 137, 255, null, undefined])
      expect(notRestartable(code, 'anywhere')).toBeUndefined();
  });
});
