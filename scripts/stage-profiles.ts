/**
 * npm run -s stage-profiles [-- --data data/pollux --out data/stage-profiles.json]
 *
 * Writes the stage-grained profiles (forward, backward, communication ms per iteration) of every
 * measured class on every GPU type the simulator knows, at 1, 2, 4, 8 and 16 GPUs: what policies see
 * through PolicyContext.hardware. Derivation and sources: src/sim/truth/stage-profile.ts, data/README.md.
 */
import { resolve } from 'node:path';
import { truthProvider } from '../src/sim/run.ts';
import { APP_NAMES } from '../src/sim/truth/apps.ts';
import { stageProfileFile } from '../src/sim/truth/stage-profile.ts';
import { checkOut, emit, runMain, scriptProgram } from './lib/inputs.ts';
import { REPO_ROOT } from './lib/paths.ts';

const program = scriptProgram('stage-profiles')
  .description('Stage-grained profiles per class, GPU type and width, from the measured data')
  .option('--data <dir>', 'measured Pollux data', resolve(REPO_ROOT, 'data/pollux'))
  .option('--out <file>', 'where to write them', resolve(REPO_ROOT, 'data/stage-profiles.json'));

await runMain(async () => {
  program.parse();
  const opts = program.opts<{ data: string; out: string }>();
  // Before the data is read, not when the result is written.
  checkOut(opts.out);
  const file = stageProfileFile(APP_NAMES, truthProvider(opts.data));
  emit(`${JSON.stringify(file, null, 2)}\n`, opts.out);
  process.stderr.write(`wrote ${opts.out}: ${APP_NAMES.length} classes\n`);
});
