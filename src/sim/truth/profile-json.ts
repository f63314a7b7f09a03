/**
 * Writes a profile file as readable, diff-friendly JSON: the usual 2-space layout, except that each
 * statistical epoch sits on one line (a full pretty-print would put every speedup on its own line).
 */
import type { ProfileFile } from '../../core/profile.ts';

export function formatProfileJson(file: ProfileFile): string {
  const { classes, ...head } = file;
  const headLines = Object.entries(head).map(
    ([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)},`,
  );
  const classBlocks = classes.map((cls) => {
    const { epochs, ...fields } = cls;
    const fieldLines = Object.entries(fields).map(
      ([k, v]) => `      ${JSON.stringify(k)}: ${JSON.stringify(v)},`,
    );
    const epochLines = epochs.map((e) => `        ${JSON.stringify(e)}`).join(',\n');
    return ['    {', ...fieldLines, '      "epochs": [', epochLines, '      ]', '    }'].join('\n');
  });
  return ['{', ...headLines, '  "classes": [', classBlocks.join(',\n'), '  ]', '}', ''].join('\n');
}
