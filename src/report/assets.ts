// The chart library inlined into report.html (uPlot's minified build and stylesheet, read from
// node_modules at run time), so the report opens offline and makes no request at all.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export interface ChartAssets {
  js: string;
  css: string;
}

let cached: ChartAssets | null = null;

/** uPlot's IIFE build (defines the global `uPlot`) and its CSS, resolved from this package's node_modules. */
export function loadChartAssets(): ChartAssets {
  if (cached !== null) return cached;
  const require = createRequire(import.meta.url);
  cached = {
    js: readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8'),
    css: readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8'),
  };
  return cached;
}
