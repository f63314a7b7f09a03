import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A trainer and its worker (Node, whose handlers see each signal): the worker, forked into its parent's
 * process group as PyTorch's DataLoader workers are, logs "worker" for any SIGTERM and runs on until its
 * parent ends it (SIGUSR2: as torch's main process ends its DataLoader workers itself). The trainer logs
 * "main" on a SIGTERM, saves for 0.3 s (or its third argument's milliseconds), ends its worker and, once
 * it is gone, logs "checkpointed" and exits 0.
 */
const TRAINER = `
const { appendFileSync, writeFileSync } = require('node:fs');
const { spawn } = require('node:child_process');
const [log, role, saveMs = '300'] = process.argv.slice(2);
if (role === 'worker') {
  process.on('SIGTERM', () => appendFileSync(log, 'worker\\n'));
  process.on('SIGUSR2', () => process.exit(0));
  writeFileSync(log + '.worker.pid', String(process.pid));
} else {
  const worker = spawn(process.execPath, [__filename, log, 'worker'], { stdio: 'ignore' });
  process.on('SIGTERM', () => {
    appendFileSync(log, 'main\\n');
    worker.on('exit', () => {
      appendFileSync(log, 'checkpointed\\n');
      process.exit(0);
    });
    setTimeout(() => worker.kill('SIGUSR2'), Number(saveMs));
  });
}
setInterval(() => {}, 1 << 30);
`;

/** The trainer's script, written into `dir`, and the log its processes write their signals to. */
export function writeTrainer(dir: string): { script: string; log: string } {
  const script = join(dir, 'trainer.cjs');
  writeFileSync(script, TRAINER);
  return { script, log: join(dir, 'signals') };
}

/**
 * The trainer behind a shell that does not exec it (dash forks even a lone `sh -c` command): the shell
 * is the group's leader, the trainer its child.
 */
export const behindShell = (script: string, log: string): string[] => [
  'sh',
  '-c',
  '"$0" "$1" "$2"; echo "ended $?"',
  process.execPath,
  script,
  log,
];

/** The lines of the trainer's log (none before one was written). */
export const signalsOf = (log: string) =>
  existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [];

/** The file the worker writes its pid to once its handlers are set. */
export const workerPidFile = (log: string) => `${log}.worker.pid`;

/** A process's group (Linux /proc). */
export function pgrpOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}
