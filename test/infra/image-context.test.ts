/**
 * The image asset's hash (its image tag) follows what the image is built from, and nothing else: a
 * change to the docs, or a file a local service or the CLI left in the checkout, must not make a deploy
 * push a new image and replace boa's pod.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { App, AssetStaging, Stack } from 'aws-cdk-lib';
import { DockerImageAsset } from 'aws-cdk-lib/aws-ecr-assets';
import { afterEach, describe, expect, it } from 'vitest';
import { IMAGE_INPUTS, imageAssetProps, REPO_ROOT } from '../../infra/boa-workload.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A checkout in miniature, with the repo's .dockerignore and Dockerfile, hashed as the stack's asset is. */
function checkout(): { write(file: string, text: string): void; hash(): string } {
  const root = mkdtempSync(join(tmpdir(), 'boa-image-context-'));
  dirs.push(root);
  // CDK caches a file's fingerprint by inode, mtime and size: two writes of the same size within one
  // tick of the kernel's coarse file clock (a few ms) read as the first (8 hashes for 9 in a fast
  // run). Each write gets a later mtime, as edits by hand have.
  const start = Date.now();
  let edits = 0;
  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
    const at = new Date(start + ++edits * 1000);
    utimesSync(join(root, file), at, at);
  };
  for (const file of ['.dockerignore', 'Dockerfile'])
    write(file, readFileSync(join(REPO_ROOT, file), 'utf8'));
  // The asset with the stack's own props (imageAssetProps: its exclusions, ignore mode and platform;
  // CDK adds .dockerignore's patterns and the Dockerfile), over this checkout.
  const hash = () => {
    // CDK caches an asset's hash per process: a stale one would hide the change under test.
    AssetStaging.clearAssetHashCache();
    return new DockerImageAsset(
      new Stack(new App({ context: { 'aws:cdk:disable-asset-staging': true } }), 'S'),
      'Image',
      imageAssetProps(root),
    ).assetHash;
  };
  return { write, hash };
}

describe("the image's build context", () => {
  it("changes with the sources and data/profiles.json, not with a local service's state", () => {
    const c = checkout();
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

  it('does not change with the docs, the clients, the tooling or files left in the checkout', () => {
    const c = checkout();
    for (const input of IMAGE_INPUTS) c.write(input === 'src' ? 'src/index.ts' : input, 'v1\n');
    const clean = c.hash();
    for (const file of [
      'README.md',
      'docs/deploy.md',
      'examples/fake-train.mjs',
      'clients/python/boa_client.py',
      'scripts/compare.ts',
      'eslint.config.js',
      'frontier.svg', // `npx boa frontier --svg frontier.svg`, as README.md has it
      '.github/workflows/ci.yml',
    ])
      c.write(file, 'not in the image\n');
    expect(c.hash()).toBe(clean);
  });

  it('changes with every file the Dockerfile copies, and with the Dockerfile', () => {
    const c = checkout();
    for (const input of IMAGE_INPUTS) c.write(input === 'src' ? 'src/index.ts' : input, 'v1\n');
    const seen = new Set([c.hash()]);
    for (const input of IMAGE_INPUTS) {
      c.write(input === 'src' ? 'src/index.ts' : input, 'v2\n');
      seen.add(c.hash());
    }
    c.write('Dockerfile', 'FROM node:22-bookworm-slim\n');
    seen.add(c.hash());
    expect(seen.size).toBe(IMAGE_INPUTS.length + 2);
    // Every path the Dockerfile COPYs from the context is an input (a new COPY needs a new entry).
    const copied = [
      ...readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8').matchAll(/^COPY (?!--from)(.+)$/gm),
    ].flatMap((match) => match[1]!.trim().split(/\s+/).slice(0, -1));
    expect(copied.sort()).toEqual([...IMAGE_INPUTS].sort());
  });
});
