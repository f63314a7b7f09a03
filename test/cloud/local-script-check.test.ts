/**
 * The local executor refuses at submission an interpreter's script that is not there (script-check.ts):
 * before, `-- node examples/nosuch.mjs` was accepted and failed only once it had GPUs, three times.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { checkLocalWorkload } from '../../src/cloud/local/executor-command.ts';
import { missingScript } from '../../src/cloud/local/script-check.ts';

const dir = mkdtempSync(join(tmpdir(), 'boa-script-'));
mkdirSync(join(dir, 'examples'));
for (const file of ['train.py', 'examples/train.mjs', 'run.sh', 'x.js']) writeFileSync(join(dir, file), '');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('refuses at submission a missing script, naming it, where it was looked for and the working directory', () => {
  expect(checkLocalWorkload({ command: ['node', 'examples/nosuch.mjs'], workingDir: dir })).toEqual({
    field: 'workload.command',
    message:
      `no such file: examples/nosuch.mjs (looked at ${join(dir, 'examples/nosuch.mjs')}, from the working` +
      ` directory ${dir}); node would fail to start it. Give its path from that folder, or the folder with --workdir`,
  });
  // Relative to the job's working directory, which is relative to the service's.
  expect(checkLocalWorkload({ command: ['node', 'x.js'] }, process.env, dir)).toBeUndefined();
  expect(
    checkLocalWorkload({ command: ['node', 'x.js'], workingDir: 'examples' }, process.env, dir)?.message,
  ).toContain(`from the working directory ${join(dir, 'examples')})`);
});

it('knows the usual interpreters and their options', () => {
  for (const command of [
    ['python3', 'nosuch.py'],
    ['/usr/bin/python3.12', '-u', 'nosuch.py', '--epochs', '3'],
    ['python', '-W', 'ignore', 'nosuch.py'],
    ['node', '--import', 'tsx', 'nosuch.ts'],
    ['nodejs', '--enable-source-maps', 'nosuch.cjs'],
    ['bash', 'scripts/run'],
    ['sh', '-e', 'nosuch.sh'],
    ['ruby', 'nosuch.rb'],
    ['perl', 'nosuch.pl'],
  ])
    expect(missingScript(command, dir), command.join(' ')).toMatch(/^no such file: /);
});

it('accepts scripts that are there, inline code, modules, and what it cannot tell', () => {
  for (const command of [
    ['python3', 'train.py'],
    ['python3', '-u', join(dir, 'train.py')],
    ['node', 'examples/train.mjs', 'nosuch.js'], // the script's arguments are its own
    ['sh', 'run.sh'],
    ['python3', '-m', 'nosuch.module'],
    ['python3', '-c', 'print(1)', 'nosuch.py'],
    ['node', '-e', 'require("./nosuch.js")'],
    ['node', '-p', '1', 'nosuch.js'],
    ['bash', '-c', 'python3 nosuch.py'],
    ['sh', '-ec', './nosuch.sh'], // a bundle of options it does not know: unsure, so accepted
    ['node', '--some-new-option', 'value/with/slash', 'x.js'],
    ['node', 'dist/train'], // node resolves dist/train.js or dist/train/index.js: a module path
    ['python3', 'notascript'], // neither a script's extension nor a slash
    ['torchrun', '--nproc_per_node', '4', 'nosuch.py'], // not an interpreter of the list
    ['node'],
    ['constructor', 'x/y.py'],
  ])
    expect(missingScript(command, dir), command.join(' ')).toBeUndefined();
});

it("lets bash find a script on the job's PATH, as it does when it is not in the folder; sh does not", () => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'boa-deploy.sh'), '');
  const path = `${bin}:/usr/bin`;
  expect(missingScript(['bash', 'boa-deploy.sh'], dir, path)).toBeUndefined();
  // A relative PATH entry is the working directory's.
  expect(missingScript(['bash', 'boa-deploy.sh'], dir, 'bin')).toBeUndefined();
  // dash (Debian's sh) and zsh do not look on PATH, nor does python: refused as before.
  for (const program of ['sh', 'dash', 'python3'])
    expect(missingScript([program, 'boa-deploy.sh'], dir, path)).toContain('no such file: boa-deploy.sh');
  expect(missingScript(['bash', 'boa-deploy.sh'], dir, '/usr/bin')).toContain('no such file: boa-deploy.sh');
  // The job's own PATH (--env PATH) is the one searched, not the service's.
  expect(
    checkLocalWorkload(
      { command: ['bash', 'boa-deploy.sh'], env: { PATH: path } },
      { PATH: '/usr/bin' },
      dir,
    ),
  ).toBeUndefined();
  expect(
    checkLocalWorkload({ command: ['bash', 'boa-deploy.sh'] }, { PATH: '/usr/bin' }, dir)?.message,
  ).toContain('no such file: boa-deploy.sh');
});
