import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { truthProvider } from '../../../src/sim/run.ts';
import { APP_NAMES } from '../../../src/sim/truth/apps.ts';
import { FORWARD_SHARE } from '../../../src/sim/truth/hardware.ts';
import { hardwareView, stageProfileFile } from '../../../src/sim/truth/stage-profile.ts';
import { POLLUX, REPO } from '../../helpers/run-script.ts';

const truthOf = truthProvider(POLLUX);
const committed = JSON.parse(readFileSync(resolve(REPO, 'data/stage-profiles.json'), 'utf8'));

describe('stage profiles', () => {
  it('data/stage-profiles.json is what `npm run -s stage-profiles` derives from the measured data', () => {
    expect(JSON.parse(JSON.stringify(stageProfileFile(APP_NAMES, truthOf)))).toEqual(committed);
  });

  it('splits compute by CUCKOO Table 3 shares and keeps t4 as measured', () => {
    const view = hardwareView(truthOf, ['t4', 'v100'], 4);
    const bert = view.stages('bert', 't4', 4);
    expect(bert.forwardMs / (bert.forwardMs + bert.backwardMs)).toBeCloseTo(FORWARD_SHARE.bert, 3);
    expect(bert).toEqual(committed.classes.bert.t4['4']);
    // Same batch on a faster GPU: compute shrinks, communication within one node is kept.
    const fast = view.stages('bert', 'v100', 4);
    expect(fast.forwardMs).toBeLessThan(bert.forwardMs);
    expect(fast.commMs).toBe(bert.commMs);
    expect(view.speedFactor('bert', 'v100', 4)).toBeGreaterThan(1);
    expect(view.speedFactor('bert', 't4', 4)).toBe(1);
  });

  it('narrows a width no batch fits and refuses nonsense', () => {
    const view = hardwareView(truthOf, ['t4'], 4);
    expect(view.stages('cifar10', 't4', 64).forwardMs).toBeGreaterThan(0);
    expect(() => view.stages('cifar10', 't4', 0)).toThrow(/positive integer/);
    expect(() => view.stages('cifar10', 'h100' as 't4', 1)).toThrow(/unknown GPU type "h100"/);
  });
});
