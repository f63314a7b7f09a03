/**
 * The profiles file (config `profiles`, BOA_PROFILES, --profiles) seeds a new data dir's classes only: a
 * file edited since was ignored at the next start without a word (found in an upgrade trial).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PROFILES } from '../../src/service/boot.ts';
import { startFailure } from '../../src/service/startup.ts';
import { startService } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'boa-config-profiles-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Profiles = { classes: Array<{ name: string; rescaleSeconds: number; epochs: unknown[] }> };
const defaults = (): Profiles => JSON.parse(readFileSync(DEFAULT_PROFILES, 'utf8')) as Profiles;

function writeProfiles(name: string, edit: (p: Profiles) => void = () => {}): string {
  const profiles = defaults();
  edit(profiles);
  const path = join(root, name);
  writeFileSync(path, JSON.stringify(profiles));
  return path;
}

async function warnings(dataDir: string, profiles?: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const boa = await startService({ dataDir, logger, config: profiles === undefined ? {} : { profiles } });
  const classes = boa.repo
    .listClasses()
    .map((c) => `${c.name}:${c.profile.rescaleSeconds}`)
    .sort();
  await boa.close();
  return { ignored: lines.filter((l) => l.event === 'config_profiles_ignored'), classes };
}

describe('a profiles file changed after the first start', () => {
  it('is ignored, and the start says which classes and how to change them', async () => {
    const dataDir = join(root, 'edited');
    const first = writeProfiles('first.json');
    expect((await warnings(dataDir, first)).ignored).toEqual([]);

    const edited = writeProfiles('edited.json', (p) => {
      p.classes.find((c) => c.name === 'bert')!.rescaleSeconds = 99;
      p.classes = p.classes.filter((c) => c.name !== 'ncf');
      p.classes.push({ ...p.classes.find((c) => c.name === 'cifar10')!, name: 'mymodel' });
    });
    const again = await warnings(dataDir, edited);
    expect(again.classes).toEqual([
      'bert:30',
      'cifar10:30',
      'deepspeech2:30',
      'imagenet:30',
      'ncf:30',
      'yolov3:30',
    ]);
    expect(again.ignored).toHaveLength(1);
    expect(again.ignored[0]!.msg).toBe(
      `the profiles file ${edited} (profiles in the config file, BOA_PROFILES or --profiles) differs from the ` +
        "data dir's classes (not stored: mymodel; stored with another profile: bert; stored but not in the file: " +
        'ncf) and is ignored: it seeds the classes at the first start only, the stored ones are used. Change them ' +
        'with `boa classes put <class.json>` and `boa classes delete <name>`',
    );

    // The same file as the stored classes, or none configured (the embedded default): nothing to say.
    expect((await warnings(dataDir, first)).ignored).toEqual([]);
    expect((await warnings(dataDir)).ignored).toEqual([]);
  });
});

describe('a profiles file past the speedup-table bound', () => {
  it('refuses the start as a setting, naming the file, the class and the limit; no data dir made', async () => {
    // Within the format's own limits (1000 epochs, 1024 widths), it had every plan take minutes.
    const widths = Object.fromEntries(
      Array.from({ length: 1024 }, (_, i) => [String(i + 1), Math.sqrt(i + 1)]),
    );
    const huge = writeProfiles('huge.json', (p) =>
      p.classes.push({
        name: 'huge',
        rescaleSeconds: 30,
        epochs: Array.from({ length: 1000 }, () => ({ workSeconds: 100, speedup: widths })),
      }),
    );
    const dataDir = join(root, 'huge');
    const error = await startService({ dataDir, config: { profiles: huge } }).then(
      async (boa) => void (await boa.close()),
      (e: unknown) => e,
    );
    expect(error, 'the start should have been refused').toBeDefined();
    const { line, exitCode } = startFailure(error);
    expect(exitCode).toBe(2);
    expect(line).toMatch(
      new RegExp(
        `^boa: invalid profile: ${huge} classes: the classes' speedup tables would hold 1025008 entries ` +
          '\\(widths x statistical epochs, over all classes; the largest huge: 1024000 over 1000 epochs, .*\\); ' +
          'at most 200000 are kept',
      ),
    );
    expect(existsSync(dataDir)).toBe(false);
  }, 60_000);
});
