import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../src/core/trace.ts';
import { appCounts, formatTraceCsv, generateTrace } from '../../src/sim/trace-gen/generate.ts';
import { interarrivalSampler } from '../../src/sim/trace-gen/interarrival.ts';
import { seededUniform } from '../../src/sim/trace-gen/random.ts';

function moments(values: readonly number[]): { mean: number; scv: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, scv: variance / mean ** 2 };
}

const NEW_TRACE = { cifar10: 50.42, bert: 21.67, deepspeech2: 23.54, yolov3: 4.75, imagenet: 0.62 };

describe('inter-arrival sampler', () => {
  it.each([0.25, 0.5, 0.8, 1, 2.65, 6])('matches mean and SCV %s', (scv) => {
    const sample = interarrivalSampler(3, scv, seededUniform(11));
    const { mean, scv: measured } = moments(Array.from({ length: 60_000 }, sample));
    expect(mean).toBeCloseTo(3, 1);
    expect(Math.abs(measured - scv)).toBeLessThan(0.08 * scv + 0.01);
  });

  it('is deterministic at SCV 0 and refuses bad parameters', () => {
    const sample = interarrivalSampler(2, 0, seededUniform(1));
    expect([sample(), sample()]).toEqual([2, 2]);
    expect(() => interarrivalSampler(0, 1, seededUniform(1))).toThrow(/mean gap must be positive/);
    expect(() => interarrivalSampler(1, -1, seededUniform(1))).toThrow(/>= 0/);
  });
});

describe('generated traces', () => {
  const spec = { jobs: 960, hours: 48, mix: NEW_TRACE, scv: 2.65, seed: 5 };
  const trace = generateTrace(spec);

  it('has N jobs spanning exactly H hours, in arrival order', () => {
    expect(trace).toHaveLength(960);
    expect(trace[0]?.time).toBe(0);
    expect(trace[959]?.time).toBe(48 * 3600);
    for (let i = 1; i < trace.length; i++) {
      expect(trace[i]?.time).toBeGreaterThanOrEqual(trace[i - 1]?.time as number);
    }
    expect(new Set(trace.map((j) => j.name)).size).toBe(960);
  });

  it('has the mix exactly, up to one job per application', () => {
    const total = Object.values(NEW_TRACE).reduce((a, b) => a + b, 0);
    for (const [app, pct] of Object.entries(NEW_TRACE)) {
      const count = trace.filter((j) => j.application === app).length;
      expect(Math.abs(count - (960 * pct) / total)).toBeLessThanOrEqual(1);
    }
    expect(appCounts(7, { a: 1, b: 1 }).sort()).toEqual(['a', 'a', 'a', 'a', 'b', 'b', 'b']);
  });

  it('gives every job a request its users made', () => {
    for (const job of trace) {
      expect(job.numReplicas).toBeGreaterThanOrEqual(1);
      expect(job.batchSize).toBeGreaterThan(0);
    }
    const cifar = trace.filter((j) => j.application === 'cifar10').map((j) => j.numReplicas);
    for (const replicas of cifar) expect([1, 4, 6, 8, 12, 16]).toContain(replicas);
    // Half the real cifar10 users asked for one GPU.
    expect(cifar.filter((r) => r === 1).length / cifar.length).toBeGreaterThan(0.4);
  });

  it('has bursty arrivals: the empirical SCV of a large trace is near the one asked for', () => {
    for (const scv of [1, 2.65]) {
      const big = generateTrace({ ...spec, jobs: 50_000, hours: 2500, scv, seed: 3 });
      const gaps = big.slice(1).map((j, i) => j.time - (big[i]?.time as number));
      const measured = moments(gaps).scv;
      expect(Math.abs(measured - scv) / scv).toBeLessThan(0.1);
    }
  });

  it('is the same for the same seed and different for another', () => {
    expect(generateTrace(spec)).toEqual(trace);
    expect(generateTrace({ ...spec, seed: 6 })).not.toEqual(trace);
  });

  it('refuses a seed the generator cannot tell from another (it keeps 32 bits)', () => {
    expect(generateTrace({ ...spec, seed: 2 ** 32 - 1 })).not.toEqual(trace);
    for (const seed of [2 ** 32 + 5, -1, 1.5]) {
      expect(() => generateTrace({ ...spec, seed })).toThrow(/a seed must be an integer from 0 to 2\^32 - 1/);
    }
  });

  it('writes CSV that the trace parser reads back', () => {
    expect(parseTrace(formatTraceCsv(trace))).toEqual(trace);
  });

  it('refuses bad specs with the field named', () => {
    expect(() => generateTrace({ ...spec, jobs: 1 })).toThrow(
      /jobs must be an integer from 2 \(arrivals need a span\) to 1000000, got 1/,
    );
    // 1e9 ended node with a fatal V8 error (no exception, so no message of ours) after a minute and GBs.
    expect(() => generateTrace({ ...spec, jobs: 1e9 })).toThrow(/to 1000000, got 1000000000/);
    expect(() => generateTrace({ ...spec, hours: 0 })).toThrow(/hours must be a positive number/);
    // 1e300 wrote arrivals at 1e303 s, which every simulator command then refused (or ran without end).
    expect(() => generateTrace({ ...spec, hours: 1e300 })).toThrow(
      /hours must be a positive number up to 277777 \(about 31 years\), got 1e\+300/,
    );
    expect(() => generateTrace({ ...spec, scv: Number.NaN })).toThrow(/scv must be a number >= 0/);
    expect(() => generateTrace({ ...spec, mix: { resnet: 1 } })).toThrow(
      /unknown application "resnet".*known: bert/,
    );
    expect(() => generateTrace({ ...spec, mix: { bert: 0 } })).toThrow(/share of bert must be a positive/);
    expect(() => generateTrace({ ...spec, mix: {} })).toThrow(/mix is empty/);
  });
});
