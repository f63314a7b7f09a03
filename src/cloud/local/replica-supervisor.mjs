/* global process */
// One replica of a job the local executor runs: started detached (its own process group, so it outlives
// a kill -9 of the service), it records its pid, runs the job's command with output appended to the log,
// forwards SIGTERM/SIGINT to it, and records how it ended. Plain JavaScript: no build step, no tsx.
//
// node replica-supervisor.mjs <dir> <rank> <node> -- <command> [args...]
//   <dir>/<rank>.pid   {"pid", "node", "startedAt"}   (also written by the executor right after spawn)
//   <dir>/<rank>.exit  {"code", "signal", "reason", "at"}  written when the command has ended
//   <dir>/<rank>.log   the command's stdout and stderr
import { spawn } from 'node:child_process';
import { closeSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, rank, node, separator, program, ...args] = process.argv.slice(2);
if (!dir || !rank || separator !== '--' || !program) {
  process.stderr.write('usage: replica-supervisor.mjs <dir> <rank> <node> -- <command> [args...]\n');
  process.exit(2);
}

/** Written whole or not at all: the executor never reads half a record. */
function writeRecord(name, value) {
  const file = join(dir, name);
  writeFileSync(`${file}.tmp`, JSON.stringify(value));
  renameSync(`${file}.tmp`, file);
}

try {
  // The executor writes the same record after spawn; whoever is first, a crash in between loses nothing.
  writeFileSync(join(dir, `${rank}.pid`), JSON.stringify({ pid: process.pid, node, startedAt: Date.now() }), {
    flag: 'wx',
  });
} catch {
  // Already written by the executor.
}

const log = openSync(join(dir, `${rank}.log`), 'a');
const child = spawn(program, args, { stdio: ['ignore', log, log] });
closeSync(log);

let ended = false;
function finish(code, signal, reason) {
  if (ended) return;
  ended = true;
  writeRecord(`${rank}.exit`, { code, signal, reason, at: Date.now() });
  process.exit(0);
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  });
}
// SIGHUP when a terminal closes must not stop a job that outlives its service.
process.on('SIGHUP', () => {});

child.on('error', (error) => {
  const notFound = error.code === 'ENOENT';
  finish(notFound ? 127 : 126, null, notFound ? `command not found: ${program}` : error.message);
});
child.on('exit', (code, signal) => {
  finish(code, signal, signal ? `killed by ${signal}` : code === 0 ? 'exited 0' : `exited ${code}`);
});
