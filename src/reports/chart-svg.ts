import type * as Vega from 'vega';
import type * as VegaLite from 'vega-lite';
import type { Section } from './figures.ts';

/**
 * A section's chart as SVG, drawn by Vega-Lite on the server: the spec is compiled to Vega and
 * rendered headless (`renderer: 'none'`, no browser, no canvas: text is measured by estimate).
 * Many labels or several series make vertical bars (stacked by series, in the data's order, as
 * a day axis); a few labels make horizontal bars with their value at the end, so long names
 * (criteria, intents) stay readable.
 */

export const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#84cc16'];

let libraries: Promise<[typeof Vega, typeof VegaLite]> | undefined;
/** Vega is large: loaded on the first chart (or by `warmRenderer` when a document's run starts), not with the service. */
export const loadVega = () => (libraries ??= Promise.all([import('vega'), import('vega-lite')]));

export function chartSpec(chart: Section['chart'], size: { width: number; height: number }): Record<string, unknown> {
  const values = chart.series.flatMap((s, si) => s.values.map((value, i) => ({ label: chart.labels[i], series: s.name, order: si, value })));
  const unit = chart.unit ?? '';
  const vertical = chart.series.length > 1 || chart.labels.length > 12;
  const color = { field: 'series', type: 'nominal', sort: chart.series.map((s) => s.name), scale: { range: PALETTE }, legend: chart.series.length > 1 ? { orient: 'top', title: null } : null };
  // Rates run from 0 to 100 %; counts step by whole numbers (never "0.5 calls").
  const axis = { labelExpr: unit ? `datum.label + '${unit}'` : undefined, tickCount: 5, ...(chart.whole ? { tickMinStep: 1, format: ',d' } : {}) };
  const valueAxis = { field: 'value', type: 'quantitative', title: null, axis, ...(unit === '%' ? { scale: { domain: [0, 100] } } : {}) };
  const labelAxis = { field: 'label', type: 'nominal', sort: null, title: null };
  const base = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    width: size.width, height: size.height, autosize: { type: 'fit', contains: 'padding' }, background: 'white',
    config: { font: 'Helvetica', view: { stroke: null }, axis: { labelFontSize: 9, labelColor: '#57606a', gridColor: '#e5e7eb', domainColor: '#57606a' }, legend: { labelFontSize: 9 } },
    data: { values },
  };
  if (vertical) {
    return {
      ...base,
      mark: { type: 'bar', tooltip: false },
      encoding: {
        x: { ...labelAxis, axis: { labelAngle: chart.labels.length > 16 ? -90 : 0, labelLimit: 90, labelOverlap: 'parity' } },
        y: { ...valueAxis, stack: 'zero' }, color, order: { field: 'order' },
      },
    };
  }
  // A few bars are as thick as for eight, not the whole height.
  const height = Math.min(size.height, 30 + 30 * Math.max(1, chart.labels.length));
  return {
    ...base,
    height,
    transform: [{ calculate: `format(datum.value, '${unit === '%' ? '.1f' : ',~r'}') + '${unit}'`, as: 'text' }],
    encoding: { y: { ...labelAxis, axis: { labelLimit: 170 }, scale: { paddingInner: 0.3 } }, x: { ...valueAxis, scale: unit === '%' ? { domain: [0, 100] } : { nice: true } } },
    layer: [
      { mark: { type: 'bar', cornerRadiusEnd: 2 }, encoding: { color } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 9, color: '#1f2328' }, encoding: { text: { field: 'text', type: 'nominal' } } },
    ],
  };
}

/** The chart of a section as an SVG document of `size` pixels. */
export async function chartSvg(chart: Section['chart'], size: { width: number; height: number }): Promise<string> {
  const [vega, vegaLite] = await loadVega();
  const { spec } = vegaLite.compile(chartSpec(chart, size) as never);
  const view = new vega.View(vega.parse(spec), { renderer: 'none', logLevel: vega.Error });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
