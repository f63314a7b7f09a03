import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { INSTANCE_ID_FILE, instanceIdOf } from '../../src/service/instance-id.ts';

describe("this boa's instance id (its claim on the jobs namespace names it)", () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'boa-instance-id-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => dirs.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('is made once, kept in the data dir, and the same at every start', () => {
    const dir = dataDir();
    const id = instanceIdOf(dir);
    expect(id).toMatch(/^boa-[0-9a-f-]{36}$/);
    expect(readFileSync(join(dir, INSTANCE_ID_FILE), 'utf8')).toBe(`${id}\n`);
    expect(instanceIdOf(dir)).toBe(id);
    expect(instanceIdOf(dataDir())).not.toBe(id);
  });

  it('an empty file (its first write cut short) gets a new id; an in-memory store one per process', () => {
    const dir = dataDir();
    writeFileSync(join(dir, INSTANCE_ID_FILE), '');
    const id = instanceIdOf(dir);
    expect(id).toMatch(/^boa-/);
    expect(instanceIdOf(dir)).toBe(id);
    expect(instanceIdOf(':memory:')).toBe(instanceIdOf(':memory:'));
    expect(instanceIdOf(':memory:')).not.toBe(id);
  });
});
