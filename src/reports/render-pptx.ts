import pptxgenjs from 'pptxgenjs';
import type { ReportData } from '../schemas/reports.ts';
import { headlineLines, NO_DATA, sectionsOf, type Section } from './figures.ts';
import { generatedText, periodText } from './dates.ts';

/**
 * The `presentation` artifact: a PPTX made with pptxgenjs. A title slide, then a slide per
 * category with a native chart (its numbers live in the slide's chart part and embedded sheet,
 * so they stay editable in PowerPoint, Keynote or LibreOffice) and a small table.
 */

// The package's types describe its CommonJS build (the class under `default`); its ESM build's default export is the class.
const PptxGenJS = pptxgenjs as unknown as typeof pptxgenjs.default;

const PALETTE = ['2563EB', 'F59E0B', '10B981', 'EF4444', '8B5CF6', '06B6D4', '84CC16'];

/** A whole step giving at most about six gridlines up to `max`. */
function wholeStep(max: number): number {
  const rough = Math.max(1, max / 5);
  const pow = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((x) => x >= rough) ?? 10 * pow;
  return Math.max(1, Math.round(step));
}

/**
 * Number formats of a chart: labels keep their decimals (`General`: 0.78 stays 0.78, 3 stays 3;
 * pptxgenjs' default `#,##0` rounds them); rates are shown with `%` on a 0 to 100 axis; counts
 * step by whole numbers.
 */
function valueFormat(chart: Section['chart']) {
  if (chart.unit === '%') {
    return { dataLabelFormatCode: '0.0"%"', valAxisLabelFormatCode: '0"%"', valAxisMinVal: 0, valAxisMaxVal: 100, valAxisMajorUnit: 25 };
  }
  const max = Math.max(0, ...chart.series.flatMap((s) => s.values));
  return chart.whole
    ? { dataLabelFormatCode: '#,##0', valAxisLabelFormatCode: '#,##0', valAxisMinVal: 0, valAxisMajorUnit: wholeStep(max) }
    : { dataLabelFormatCode: 'General', valAxisLabelFormatCode: 'General', valAxisMinVal: 0 };
}

export async function renderPptx(data: ReportData): Promise<Buffer> {
  const pptx = new PptxGenJS();
  pptx.layout = 'LAYOUT_WIDE';
  pptx.title = data.report.name;
  pptx.author = 'Agent Management Service';

  const cover = pptx.addSlide();
  cover.background = { color: '0F172A' };
  cover.addText(data.report.name, { x: 0.6, y: 1.2, w: 12, h: 1, fontSize: 36, bold: true, color: 'FFFFFF' });
  cover.addText(periodText(data), { x: 0.6, y: 2.2, w: 12, h: 0.5, fontSize: 16, color: 'CBD5E1' });
  cover.addText(headlineLines(data).join('\n'), { x: 0.6, y: 3.2, w: 12, h: 2, fontSize: 22, color: 'FFFFFF', bold: true });
  cover.addText(generatedText(data), { x: 0.6, y: 6.6, w: 12, h: 0.4, fontSize: 12, color: 'CBD5E1' });

  for (const section of sectionsOf(data)) {
    const slide = pptx.addSlide();
    slide.addText(section.title, { x: 0.5, y: 0.3, w: 12.3, h: 0.6, fontSize: 28, bold: true, color: '1F2328' });
    slide.addText(section.subtitle, { x: 0.5, y: 0.9, w: 12.3, h: 0.4, fontSize: 14, color: '57606A' });
    if (section.chart.empty) {
      slide.addText(NO_DATA, { x: 0.5, y: 1.4, w: 8, h: 5.6, fontSize: 20, color: '57606A', align: 'center', valign: 'middle', fill: { color: 'F6F8FA' }, line: { color: 'D0D7DE', width: 0.5 } });
    } else {
      const chartData = section.chart.series.map((s) => ({ name: s.name, labels: section.chart.labels, values: s.values }));
      slide.addChart(pptx.ChartType.bar, chartData, {
        x: 0.5, y: 1.4, w: 8, h: 5.6, barDir: 'col', barGrouping: 'clustered', chartColors: PALETTE.slice(0, Math.max(1, chartData.length)),
        showLegend: chartData.length > 1, legendPos: 'b', catAxisLabelFontSize: 9, valAxisLabelFontSize: 9,
        showValue: chartData.length === 1 && section.chart.labels.length <= 12, dataLabelFontSize: 9, ...valueFormat(section.chart),
      });
    }
    const rows = [section.table.columns, ...section.table.rows.slice(0, 14)].map((r, i) => r.map((cell) => ({
      text: String(cell), options: { bold: i === 0, fontSize: 10, color: '1F2328' },
    })));
    slide.addTable(rows, { x: 8.8, y: 1.4, w: 4.2, border: { type: 'solid', pt: 0.5, color: 'D0D7DE' }, autoPage: false });
  }
  const out = await pptx.write({ outputType: 'nodebuffer' });
  return out as Buffer;
}
