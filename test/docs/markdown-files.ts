import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The repository's root, whose Markdown the docs tests read. */
export const REPO = resolve(import.meta.dirname, '../..');
const SKIPPED = new Set(['node_modules', '.git', 'cdk.out', 'dist', 'coverage']);

/** Every Markdown file under `dir`, dependencies, build output and dot folders left out. */
export function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (SKIPPED.has(name) || name.startsWith('.')) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return markdownFiles(path);
    return name.endsWith('.md') ? [path] : [];
  });
}
