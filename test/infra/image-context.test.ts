/**
 * The image asset's hash follows what the image is built from, not a local service's state in data/
 * (its token, job-token key, lock journal, jobs' logs): those would make every deploy from a checkout
 * where boa was tried build, push and roll a new image.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FileSystem, IgnoreMode } from 'aws-cdk-lib';
import { afterEach, describe, expect, it } from 'vitest';
import { IMAGE_EXCLUDE, REPO_ROOT } from '../../infra/boa-workload.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout in miniature, with the repo's .dockerignore, as the asset reads it. */
function checkout(): { root: string; write(file: string, text: string): void; hash(): string } {
  const root = mkdtempSync(join(tmpdir(), 'boa-image-context-'));
  dirs.push(root);
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  };
  const dockerignore = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8');
  write('.dockerignore', dockerignore);
  // DockerImageAsset excludes .dockerignore's patterns, then its own `exclude`, in Docker's mode.
  const patterns = dockerignore
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const hash = () =>
    FileSystem.fingerprint(root, { exclude: [...patterns, ...IMAGE_EXCLUDE], ignoreMode: IgnoreMode.DOCKER });
  return { root, write, hash };
}

describe("the image's build context", () => {
  it("changes with the sources and data/profiles.json, not with a local service's state", () => {
    const c = checkout();
    c.write('Dockerfile', 'FROM node:22\n');
    c.write('src/service/main.ts', 'export {};\n');
    c.write('data/profiles.json', '{"version":1}\n');
    const clean = c.hash();

    for (const file of [
      'data/token',
      'data/job-token.key',
      'data/boa.lock-journal',
      'data/boa.sqlite',
      'data/jobs/1/1/0.log',
      'data/charts/matrix/x.json',
    ])
      c.write(file, 'local state\n');
    expect(c.hash()).toBe(clean);

    c.write('data/profiles.json', '{"version":1,"classes":[]}\n');
    const profiles = c.hash();
    expect(profiles).not.toBe(clean);
    c.write('src/service/main.ts', 'export const changed = 1;\n');
    expect(c.hash()).not.toBe(profiles);
  });
});
