/** The policy context the boa policy tests run on: the project's profiles, 4-GPU nodes, 60 s ticks. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseProfileFile } from '../../../../src/core/profile.ts';
import type { PolicyContext } from '../../../../src/sim/policy.ts';
import { REPO } from '../../../helpers/run-script.ts';

const profiles = parseProfileFile(JSON.parse(readFileSync(resolve(REPO, 'data/profiles.json'), 'utf8')));

export function boaContext(traceRatesPerHour: Record<string, number>): PolicyContext {
  return {
    profiles,
    gpusPerNode: 4,
    tickSeconds: 60,
    rescaleSeconds: 30,
    oracle: { goodput: () => 0 },
    traceRatesPerHour,
    seed: 1,
  };
}
