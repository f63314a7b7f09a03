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
