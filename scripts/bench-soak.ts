/**
 * Soak benchmark: the real service (`npm start`, its own process, a fresh data dir, 1-second ticks)
 * under 100 keep-alive connections on 127.0.0.1 for a bounded time, against the allocation and budget
 * routes (job tokens and the operator token). Prints one JSON object: requests, req/s, latency p50
 * and p99, errors, and the service's RSS at start (after a warm-up) and at the end.
 *   npm run -s bench:soak -- [--seconds 300] [--connections 100] [--jobs 50]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runMain, UsageError, scriptProgram } from './lib/inputs.ts';
import { checkTargets } from './lib/targets.ts';

const MAIN = resolve(import.meta.dirname, '../src/service/main.ts');
/** The service's V8 heap in the soak: well above what it keeps (under 100 MB), so only a leak fills it. */
const HEAP_CAP_MB = 160;
const MB = 1024 * 1024;

const program = scriptProgram('bench:soak')
  .option('--seconds <n>', 'how long the load runs', '300')
  .option('--connections <n>', 'concurrent keep-alive connections', '100')
  .option('--jobs <n>', 'registered jobs whose allocation is polled', '50')
  .option('--warmup <n>', 'seconds of load before the starting RSS is read', '10');

function rss(pid: number): number {
  const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!kb) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(kb[1]) * 1024;
}

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => done(port));
    });
  });
}

function startService(dataDir: string, port: number): Promise<ChildProcess> {
  return new Promise((ready, fail) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        MAIN,
        '--data',
        dataDir,
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--tick-seconds',
        '1',
      ],
      {
        env: {
          ...process.env,
          BOA_TOKEN: undefined,
          BOA_CLOUD: undefined,
          BOA_LOG_LEVEL: 'warn',
          // A capped heap: V8 otherwise grows it under load and collects late, so RSS growth measured
          // garbage not yet collected (248 -> 339 MB in 20 s with nothing retained), not a leak.
          NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${HEAP_CAP_MB}`.trim(),
        },
      },
    );
    let output = '';
    const poll = setInterval(async () => {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`);
        if (res.ok) {
          clearInterval(poll);
          ready(child);
        }
      } catch {
        // not listening yet
      }
    }, 200);
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('exit', (code) => {
      clearInterval(poll);
      fail(new Error(`service exited with ${code}: ${output.slice(-2000)}`));
    });
  });
}

await runMain(async () => {
  const opts = program.parse().opts<{ seconds: string; connections: string; jobs: string; warmup: string }>();
  const seconds = Number(opts.seconds);
  const connections = Number(opts.connections);
  const jobCount = Number(opts.jobs);
  const warmup = Number(opts.warmup);
  if (!(seconds > 0)) throw new UsageError('--seconds must be > 0');
  if (!Number.isInteger(connections) || connections < 1)
    throw new UsageError('--connections must be a positive integer');
  if (!Number.isInteger(jobCount) || jobCount < 1) throw new UsageError('--jobs must be a positive integer');
  if (!(warmup >= 0)) throw new UsageError('--warmup must be >= 0');

  const dataDir = mkdtempSync(join(tmpdir(), 'boa-soak-'));
  const port = await freePort();
  let service: ChildProcess;
  try {
    service = await startService(dataDir, port);
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  try {
    const operator = readFileSync(join(dataDir, 'token'), 'utf8').trim();
    const call = (method: string, path: string, token: string, body?: unknown) =>
      new Promise<number>((done, fail) => {
        const payload = body === undefined ? undefined : JSON.stringify(body);
        const req = request(
          {
            host: '127.0.0.1',
            port,
            path,
            method,
            agent,
            headers: {
              authorization: `Bearer ${token}`,
              ...(payload
                ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
                : {}),
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => done(res.statusCode ?? 0));
          },
        );
        req.on('error', fail);
        req.end(payload);
      });

    if ((await call('PUT', '/v1/budget', operator, { gpuHoursPerHour: 40 })) !== 200)
      throw new Error('setting the budget failed');
    const classes = ['cifar10', 'ncf', 'bert', 'yolov3'];
    const jobs: Array<{ id: number; token: string }> = [];
    for (let i = 0; i < jobCount; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
        body: JSON.stringify({ class: classes[i % classes.length], name: `soak-${i}` }),
      });
      if (res.status !== 201) throw new Error(`registering job ${i}: ${res.status}`);
      jobs.push((await res.json()) as { id: number; token: string });
    }

    // The mix: mostly jobs polling their allocation, the operator reading and now and then setting the budget.
    let n = 0;
    const next = (): [string, string, string, unknown?] => {
      const k = n++ % 20;
      const job = jobs[n % jobs.length]!;
      if (k < 14) return ['GET', `/v1/jobs/${job.id}/allocation`, job.token];
      if (k < 19) return ['GET', '/v1/budget', operator];
      return ['PUT', '/v1/budget', operator, { gpuHoursPerHour: 40 + (n % 3) }];
    };

    let measuring = false;
    const latencies: number[] = [];
    let errors = 0;
    let unexpected = 0;
    const statuses: Record<string, number> = {};
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const [method, path, token, body] = next();
        const t0 = performance.now();
        try {
          const status = await call(method, path, token, body);
          if (measuring) {
            latencies.push(performance.now() - t0);
            statuses[status] = (statuses[status] ?? 0) + 1;
            if (status !== 200) unexpected++;
          }
        } catch {
          if (measuring) errors++;
        }
      }
    };
    const workers = Array.from({ length: connections }, worker);

    await new Promise((r) => setTimeout(r, warmup * 1000));
    const rssStart = rss(service.pid!);
    let rssMax = rssStart;
    measuring = true;
    const started = performance.now();
    const sampler = setInterval(() => {
      const now = rss(service.pid!);
      rssMax = Math.max(rssMax, now);
      const elapsed = (performance.now() - started) / 1000;
      process.stderr.write(
        `\rsoak ${elapsed.toFixed(0)}/${seconds}s  ${latencies.length} requests  ${(latencies.length / elapsed).toFixed(0)} req/s  RSS ${(now / MB).toFixed(1)} MB   `,
      );
    }, 5000);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const elapsed = (performance.now() - started) / 1000;
    measuring = false;
    stop = true;
    clearInterval(sampler);
    await Promise.all(workers);
    const rssEnd = rss(service.pid!);
    rssMax = Math.max(rssMax, rssEnd);
    process.stderr.write('\n');

    const sorted = Float64Array.from(latencies).sort();
    const q = (p: number) =>
      Number(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!.toFixed(2));
    const readyz = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
      lastTickAt: string | null;
    };
    console.log(
      JSON.stringify(
        {
          seconds: Number(elapsed.toFixed(1)),
          connections,
          jobs: jobCount,
          requests: latencies.length,
          reqPerSec: Math.round(latencies.length / elapsed),
          latencyMs: { p50: q(0.5), p99: q(0.99), max: q(1) },
          statuses,
          errors,
          unexpected,
          ticking: readyz.lastTickAt !== null,
          rssMB: {
            start: Number((rssStart / MB).toFixed(1)),
            end: Number((rssEnd / MB).toFixed(1)),
            max: Number((rssMax / MB).toFixed(1)),
            growth: Number(((rssEnd - rssStart) / MB).toFixed(1)),
          },
          heapCapMB: HEAP_CAP_MB,
          targets: checkTargets({
            rssGrowthMB: { value: Number(((rssEnd - rssStart) / MB).toFixed(1)), atMost: 50 },
            errors: { value: errors + unexpected, atMost: 0 },
          }),
        },
        null,
        2,
      ),
    );
  } finally {
    agent.destroy();
    service.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
