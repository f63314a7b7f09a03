import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, so defaults work from any working directory. */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The committed default profile file. */
export const DEFAULT_PROFILES = resolve(REPO_ROOT, 'data/profiles.json');
