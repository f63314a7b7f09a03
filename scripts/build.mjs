#!/usr/bin/env node
/**
 * `npm run build`: the service as plain JavaScript in dist/ (what the deploy image runs, with no
 * TypeScript loader): tsc emits src/ with .ts imports rewritten to .js; this copies what tsc does not
 * (the dashboard's page and scripts, the default profiles) and writes the calculator worker's entry.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(root, process.argv[2] ?? 'dist');
rmSync(out, { recursive: true, force: true });
const tsc = join(root, 'node_modules/typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', out], {
  stdio: 'inherit',
});
const assets = [
  // Its page and browser scripts: all but the .ts, which tsc compiles.
  'src/api/dashboard',
  'src/store/migrations',
  'src/cloud/local/replica-supervisor.sh',
  'src/cloud/local/replica-launcher.mjs',
  'data/profiles.json',
];
for (const file of assets) {
  mkdirSync(dirname(join(out, file)), { recursive: true });
  cpSync(join(root, file), join(out, file), { recursive: true, filter: (from) => !from.endsWith('.ts') });
}
// Compiled code needs no loader: the worker entry just loads the compiled worker.
writeFileSync(join(out, 'src/service/calculator/worker-entry.mjs'), "await import('./worker.js');\n");
process.stdout.write(`built ${out}\n`);
