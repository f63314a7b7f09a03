import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeRecord } from './executor-records.ts';

/** Below Linux's ephemeral ports (32768 and up), which outgoing connections take at random. */
const FIRST_PORT = 20_000;
const PORT_COUNT = 32_768 - FIRST_PORT;

const recordOf = (dir: string) => join(dir, 'rendezvous');
const keyOf = (jobId: number, generation: number) => `${jobId}/${generation}`;

function readPort(dir: string): number | undefined {
  try {
    const { port } = JSON.parse(readFileSync(recordOf(dir), 'utf8')) as { port: unknown };
    return typeof port === 'number' && Number.isInteger(port) && port > 0 && port < 65_536 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** TCP ports something on this machine listens on (Linux; elsewhere none are known). */
function readListeningPorts(): Set<number> {
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    // sl local_address rem_address st ...: local_address is ADDR:PORT in hex, st 0A is LISTEN.
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (state === '0A' && local) ports.add(parseInt(local.slice(local.lastIndexOf(':') + 1), 16));
    }
  }
  return ports;
}

/**
 * Rank 0's port (MASTER_PORT) for each generation of a job the local executor runs: one that no other
 * generation it still knows of was given and that nothing listens on yet. Written to the generation's
 * folder before its first replica starts, so a restarted service gives the same port to the ranks it
 * has yet to start; a generation that never started anything may get another one.
 */
export class RendezvousPorts {
  private readonly ports = new Map<string, { port: number; recorded: boolean }>();
  /** Read at most once a second: /proc/net/tcp walks the kernel's whole socket table (5 ms here). */
  private listening: { at: number; ports: ReadonlySet<number> } | undefined;

  portOf(jobId: number, generation: number, dir: string): number {
    const key = keyOf(jobId, generation);
    const known = this.ports.get(key);
    if (known) return known.port;
    const taken = new Set([...this.ports.values()].map((p) => p.port));
    const recorded = readPort(dir);
    const entry =
      recorded !== undefined && !taken.has(recorded)
        ? { port: recorded, recorded: true }
        : { port: this.choose(taken), recorded: false };
    this.ports.set(key, entry);
    return entry.port;
  }

  /** A generation with replicas found running: the port they were given. */
  adopt(jobId: number, generation: number, dir: string): void {
    const key = keyOf(jobId, generation);
    if (this.ports.has(key)) return;
    // Started before ports were recorded: the port was derived from the job and generation then.
    const port = readPort(dir) ?? 20_000 + ((jobId * 7 + generation) % 30_000);
    this.ports.set(key, { port, recorded: true });
  }

  /** Before a replica of the generation starts (its folder exists): the port it gets is kept on disk. */
  record(jobId: number, generation: number, dir: string, port: number): void {
    const key = keyOf(jobId, generation);
    const known = this.ports.get(key);
    if (known?.recorded && known.port === port) return;
    if (readPort(dir) !== port) writeRecord(recordOf(dir), { port });
    this.ports.set(key, { port, recorded: true });
  }

  /** Frees the ports of every generation but these (the wanted ones and those with replicas left). */
  retain(live: Iterable<{ readonly jobId: number; readonly generation: number }>): void {
    const keep = new Set<string>();
    for (const { jobId, generation } of live) keep.add(keyOf(jobId, generation));
    for (const key of this.ports.keys()) if (!keep.has(key)) this.ports.delete(key);
  }

  private choose(taken: ReadonlySet<number>): number {
    const listening = this.listeningPorts();
    // From a random place, so two services on one machine (each with its own job 1) rarely meet.
    const start = randomInt(PORT_COUNT);
    for (let i = 0; i < PORT_COUNT; i++) {
      const port = FIRST_PORT + ((start + i) % PORT_COUNT);
      if (!taken.has(port) && !listening.has(port)) return port;
    }
    return FIRST_PORT + start; // all 12,768 in use: no machine runs that many jobs at once
  }

  private listeningPorts(): ReadonlySet<number> {
    const now = performance.now();
    if (!this.listening || now - this.listening.at > 1000) {
      this.listening = { at: now, ports: readListeningPorts() };
    }
    return this.listening.ports;
  }
}
