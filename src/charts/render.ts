import type { TopLevelSpec } from 'vega-lite';

/**
 * Renders a Vega-Lite spec to a standalone SVG document, headless (no canvas needed). Vega and
 * Vega-Lite are loaded on the first chart: about a second of start-up and tens of MB in every process
 * that imports the API (the service, the CLI's tests), most of which never draws one.
 */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const [{ parse, View }, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new View(parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** What every boa chart shares: schema, size and a white background (the SVGs are viewed standalone). */
export function chartFrame(title: string) {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    width: 640,
    height: 380,
    background: 'white',
  } as const;
}
