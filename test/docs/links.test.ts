/**
 * Every relative link in the project's Markdown reaches a file that exists, and every `#anchor` a
 * heading of the file it names: docs move and headings are renamed, and a broken link is only found by
 * the reader who follows it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { markdownFiles, REPO } from './markdown-files.ts';

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');
}

/** Outside fenced code blocks: a `#` line there is a shell comment, a link there is an example. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '');
}

function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const line of prose(markdown).split('\n')) {
    const heading = /^#{1,6} (.*)$/.exec(line);
    if (heading) anchors.add(headingAnchor(heading[1] as string));
  }
  return anchors;
}

/** Links that leave the repo (a scheme) or point at a route of the running service are not checked. */
function relativeLinks(markdown: string): string[] {
  const links: string[] = [];
  for (const match of prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = match[1] as string;
    if (/^[a-z]+:/i.test(link) || link.startsWith('/')) continue;
    links.push(link);
  }
  return links;
}

describe('links in the Markdown', () => {
  it('headingAnchor reads a heading as GitHub does', () => {
    expect(headingAnchor('Measured 2026-11-29 (later): the echo')).toBe('measured-2026-11-29-later-the-echo');
    expect(headingAnchor('The simulator: boa against the field')).toBe('the-simulator-boa-against-the-field');
    expect(headingAnchor("What the run's own span asks")).toBe('what-the-runs-own-span-asks');
  });

  it('reach files that exist and headings those files have', () => {
    const files = markdownFiles(REPO);
    expect(files.length).toBeGreaterThan(10);
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => {
      let found = anchors.get(file);
      if (!found) anchors.set(file, (found = anchorsOf(readFileSync(file, 'utf8'))));
      return found;
    };
    const broken: string[] = [];
    for (const file of files) {
      for (const link of relativeLinks(readFileSync(file, 'utf8'))) {
        const [path = '', anchor] = link.split('#');
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        const where = `${relative(REPO, file)}: ${link}`;
        if (!existsSync(target)) broken.push(`${where} (no such file)`);
        else if (anchor && target.endsWith('.md') && !anchorsIn(target).has(anchor))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });
});
