import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../src/core/trace.ts';
import { formatClusterSpec, isHeterogeneous, parseClusterSpec } from '../../src/sim/gpu-types.ts';

describe('cluster specs', () => {
  it('reads type:nodes by instance family or GPU type, and the same as JSON', () => {
    const spec = parseClusterSpec('g4dn:8, p3:4,a10g:2');
    expect(spec).toEqual([
      { type: 't4', nodes: 8 },
      { type: 'v100', nodes: 4 },
      { type: 'a10g', nodes: 2 },
    ]);
    expect(parseClusterSpec('[{"type":"t4","nodes":8},{"type":"p3","nodes":4}]')).toEqual(spec.slice(0, 2));
    expect(formatClusterSpec(spec)).toBe('g4dn:8,p3:4,g5:2');
    expect(isHeterogeneous(spec)).toBe(true);
    expect(isHeterogeneous(parseClusterSpec('g4dn:3'))).toBe(false);
  });

  it('names what is wrong and what is allowed', () => {
    expect(() => parseClusterSpec('h100:2')).toThrow(
      /unknown GPU type "h100"; allowed: g4dn \(or t4\), p3 \(or v100\), g5 \(or a10g\)/,
    );
    expect(() => parseClusterSpec('g4dn:0')).toThrow(/positive integer, got 0/);
    expect(() => parseClusterSpec('g4dn:2,t4:1')).toThrow(/t4 is given twice/);
    expect(() => parseClusterSpec('g4dn')).toThrow(/not type:nodes/);
    expect(() => parseClusterSpec('')).toThrow(/empty/);
    expect(() => parseClusterSpec('[1]')).toThrow(/an array of \{"type"/);
    expect(() => parseClusterSpec('[{"nodes":1}]')).toThrow(/needs a "type"/);
  });
});

describe('trace deadline and kind columns', () => {
  const header = 'name,time,application,num_replicas,batch_size,deadline,kind';
  it('are optional per row', () => {
    const jobs = parseTrace(`${header}\na,10,ncf,1,32,500,interactive\nb,20,ncf,1,32,,\n`);
    expect(jobs[0]).toMatchObject({ deadline: 500, kind: 'interactive' });
    expect(jobs[1]?.deadline).toBeUndefined();
    expect(jobs[1]?.kind).toBeUndefined();
  });

  it('refuses a deadline before the arrival and an unknown kind', () => {
    expect(() => parseTrace(`${header}\na,10,ncf,1,32,5,\n`)).toThrow(
      /line 2: deadline must be .* after the arrival \(10\)/,
    );
    expect(() => parseTrace(`${header}\na,10,ncf,1,32,,urgent\n`)).toThrow(
      /kind must be interactive or batch, got "urgent"/,
    );
  });
});
