import PDFDocument from 'pdfkit';
import SVGtoPDF from 'svg-to-pdfkit';
import type { DataCategory, ReportData } from '../schemas/reports.ts';
import { chartSvg } from './chart-svg.ts';
import { CATEGORY_TITLES, headlineLines, NO_DATA, sectionsOf, type Section } from './figures.ts';
import { generatedText, periodText } from './dates.ts';

/**
 * The `document` artifact: an A4 PDF made with pdfkit. A cover with the headline figures, then a
 * page per category with its chart (Vega-Lite rendered to SVG, drawn into the page by
 * svg-to-pdfkit) and its table. Text is real text (the standard Helvetica), so the figures can be
 * searched and extracted.
 */

const MARGIN = 50;
const A4_WIDTH = 595.28;
const INK = '#1f2328';
const MUTED = '#57606a';

/** A section's chart: its Vega-Lite SVG drawn into the page as vector paths and text; returns the height it took. */
function drawChart(doc: PDFKit.PDFDocument, svg: string, box: { x: number; y: number; w: number; h: number }): number {
  const height = Math.min(box.h, Number(/<svg[^>]*\sheight="([\d.]+)"/.exec(svg)?.[1] ?? box.h));
  SVGtoPDF(doc, svg, box.x, box.y, { width: box.w, height, assumePt: true, preserveAspectRatio: 'xMinYMin meet' });
  return height;
}

/** An empty chart: a quiet box saying so, instead of axes around nothing; returns the height it took. */
function drawNoData(doc: PDFKit.PDFDocument, box: { x: number; y: number; w: number }): number {
  const h = 80;
  doc.roundedRect(box.x, box.y, box.w, h, 4).lineWidth(0.5).fillAndStroke('#f6f8fa', '#d0d7de');
  doc.font('Helvetica').fontSize(12).fillColor(MUTED).text(NO_DATA, box.x, box.y + h / 2 - 7, { width: box.w, align: 'center' });
  return h;
}

function drawTable(doc: PDFKit.PDFDocument, table: Section['table'], top: number): void {
  const width = doc.page.width - 2 * MARGIN;
  const first = Math.min(260, width * 0.5);
  const rest = (width - first) / Math.max(1, table.columns.length - 1);
  const xOf = (i: number) => (i === 0 ? MARGIN : MARGIN + first + (i - 1) * rest);
  const wOf = (i: number) => (i === 0 ? first - 6 : rest - 6);
  let y = top;
  const row = (cells: (string | number)[], bold: boolean) => {
    if (y > doc.page.height - MARGIN - 14) {
      doc.addPage();
      y = MARGIN;
    }
    doc.font(bold ? 'Helvetica-Bold' : 'Helvetica').fontSize(9).fillColor(INK);
    cells.forEach((cell, i) => doc.text(String(cell), xOf(i), y, { width: wOf(i), align: i === 0 ? 'left' : 'right', lineBreak: false, ellipsis: true }));
    y += 14;
    doc.moveTo(MARGIN, y - 3).lineTo(MARGIN + width, y - 3).lineWidth(0.3).strokeColor('#d0d7de').stroke();
  };
  row(table.columns, true);
  if (table.rows.length === 0) row(['No data in this period', ...table.columns.slice(1).map(() => '')], false);
  for (const r of table.rows) row(r, false);
}

function drawCover(doc: PDFKit.PDFDocument, data: ReportData): void {
  doc.rect(0, 0, doc.page.width, 180).fill('#0f172a');
  doc.fillColor('#ffffff').font('Helvetica-Bold').fontSize(26).text(data.report.name, MARGIN, 70, { width: doc.page.width - 2 * MARGIN });
  doc.font('Helvetica').fontSize(11).fillColor('#cbd5e1').text(periodText(data), MARGIN, 120);
  const scope = data.report.widget_ids.length ? `Agents: ${data.agents.filter((a) => data.report.widget_ids.includes(a.id)).map((a) => a.name).join(', ')}` : 'The whole organization';
  doc.fillColor(INK).fontSize(12).text(scope, MARGIN, 210);
  let y = 250;
  for (const line of headlineLines(data)) {
    doc.font('Helvetica-Bold').fontSize(18).fillColor(INK).text(line, MARGIN, y);
    y += 32;
  }
  doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(`${generatedText(data)} · sections: ${data.report.data_categories.map((c) => CATEGORY_TITLES[c as DataCategory] ?? c).join(', ')}`, MARGIN, y + 10);
}

/** Renders the report's figures as a PDF. */
export async function renderPdf(data: ReportData): Promise<Buffer> {
  const sections = sectionsOf(data);
  const chart = { x: MARGIN, y: MARGIN + 50, w: A4_WIDTH - 2 * MARGIN, h: 260 };
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: data.report.name, Author: 'Agent Management Service', Subject: periodText(data) } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  drawCover(doc, data);
  // One chart at a time: each SVG (and its Vega view) is let go once drawn, which keeps the peak low.
  for (const section of sections) {
    const svg = section.chart.empty ? null : await chartSvg(section.chart, { width: chart.w, height: chart.h });
    doc.addPage();
    doc.font('Helvetica-Bold').fontSize(18).fillColor(INK).text(section.title, MARGIN, MARGIN);
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text(section.subtitle, MARGIN, MARGIN + 24);
    const height = svg ? drawChart(doc, svg, chart) : drawNoData(doc, chart);
    drawTable(doc, section.table, chart.y + height + 20);
  }
  doc.end();
  return done;
}
