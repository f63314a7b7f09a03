import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** Renders a Vega-Lite spec to a standalone SVG document, headless (no canvas needed). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
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
