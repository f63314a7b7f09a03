#!/usr/bin/env node
/* global process */
// Starts the local executor's replicas on its behalf, so the service never forks itself per replica:
// forking a process with a large heap costs milliseconds of kernel time and leaves every page of that
// heap copy-on-write, so the service's next tick pays page faults (bench:tick --executed measured the
// decision 2-3x slower). This process stays small; forking it is cheap.
//
// Requests on stdin, one JSON object a line: {"id","file","args","cwd","env"}. Answers on stdout, one a
// line: {"id","pid"} once started, {"id","error"} if it could not be, and {"exited": pid} when a process
// it started has ended (it is reaped here, so its exit is known at once). Ends when stdin closes (the
// service stopped or was killed); what it started runs on, detached in its own process group.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

// The service that asked: once it is gone (killed), requests still buffered on stdin are not started, so a
// restarted service never finds a replica starting behind its back after it adopted what was recorded.
const service = Number(process.argv[2]) || process.ppid;
const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
// The service's terminal may send these to its whole process group; the service decides when to stop.
process.on('SIGINT', () => undefined);
process.on('SIGHUP', () => undefined);
process.stdout.on('error', () => process.exit(0));

createInterface({ input: process.stdin })
  .on('line', (line) => {
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      return;
    }
    if (process.ppid !== service) return; // nobody will record it
    let child;
    try {
      child = spawn(request.file, request.args, {
        cwd: request.cwd,
        env: request.env,
        detached: true,
        stdio: 'ignore',
      });
    } catch (error) {
      send({ id: request.id, error: error.message });
      return;
    }
    child.on('error', (error) => {
      if (child.pid === undefined) send({ id: request.id, error: error.message });
    });
    if (child.pid === undefined) return; // the error event answers
    const pid = child.pid;
    send({ id: request.id, pid });
    child.on('exit', () => send({ exited: pid }));
  })
  .on('close', () => process.exit(0));
