import PDFDocument from 'pdfkit';
import type { ReportData } from '../schemas/reports.ts';
import { headlineLines, sectionsOf, type Section } from './figures.ts';

/**
 * The `document` artifact: an A4 PDF made with pdfkit. A cover with the headline figures, then a
 * page per category with its chart, drawn as vector shapes, and its table. Text is real text (the
 * standard Helvetica), so the figures can be searched and extracted.
 */

const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#84cc16'];
const MARGIN = 50;
const INK = '#1f2328';
const MUTED = '#57606a';

const periodText = (data: ReportData) => `${data.period.start.slice(0, 10)} to ${data.period.end.slice(0, 10)} (end exclusive, ${data.period.timezone})`;

/** A rounded axis maximum above `max` (1, 2, 2.5 or 5 times a power of ten). */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const pow = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * pow >= max) return m * pow;
  return 10 * pow;
}

const formatTick = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** A grouped bar chart of a section in the box (x, y, w, h). */
export function drawChart(doc: PDFKit.PDFDocument, chart: Section['chart'], box: { x: number; y: number; w: number; h: number }): void {
  const legendH = chart.series.length > 1 ? 16 : 0;
  const plot = { x: box.x + 40, y: box.y + legendH, w: box.w - 44, h: box.h - legendH - 34 };
  const max = niceMax(Math.max(0, ...chart.series.flatMap((s) => s.values)));
  doc.save();
  doc.font('Helvetica').fontSize(7).fillColor(MUTED);
  for (let i = 0; i <= 4; i += 1) {
    const y = plot.y + plot.h - (plot.h * i) / 4;
    doc.moveTo(plot.x, y).lineTo(plot.x + plot.w, y).lineWidth(0.5).strokeColor('#d0d7de').stroke();
    doc.text(formatTick((max * i) / 4) + (chart.unit ?? ''), box.x, y - 3, { width: 36, align: 'right', lineBreak: false });
  }
  const n = Math.max(1, chart.labels.length);
  const slot = plot.w / n;
  const barW = Math.max(1, (slot * 0.8) / Math.max(1, chart.series.length));
  chart.series.forEach((s, si) => {
    doc.fillColor(PALETTE[si % PALETTE.length]!);
    s.values.forEach((v, i) => {
      const h = (plot.h * v) / max;
      if (h > 0) doc.rect(plot.x + i * slot + slot * 0.1 + si * barW, plot.y + plot.h - h, barW, h).fill();
    });
  });
  const every = Math.ceil(n / 16);
  doc.fillColor(MUTED).fontSize(6.5);
  chart.labels.forEach((label, i) => {
    if (i % every !== 0) return;
    const fits = Math.max(4, Math.floor((slot * every) / 3.4));
    doc.text(label.length > fits ? `${label.slice(0, fits - 1)}…` : label, plot.x + i * slot, plot.y + plot.h + 4, { width: slot * every, align: 'center', lineBreak: false });
  });
  doc.moveTo(plot.x, plot.y + plot.h).lineTo(plot.x + plot.w, plot.y + plot.h).lineWidth(0.8).strokeColor(MUTED).stroke();
  if (legendH) {
    let lx = plot.x;
    chart.series.forEach((s, si) => {
      doc.rect(lx, box.y + 2, 8, 8).fill(PALETTE[si % PALETTE.length]!);
      doc.fillColor(INK).fontSize(7).text(s.name, lx + 11, box.y + 2, { lineBreak: false });
      lx += 16 + doc.widthOfString(s.name);
    });
  }
  doc.restore();
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
  doc.font('Helvetica').fontSize(9).fillColor(MUTED).text(`Generated ${data.generated_at} · sections: ${data.report.data_categories.join(', ')}`, MARGIN, y + 10);
}

/** Renders the report's figures as a PDF. */
export function renderPdf(data: ReportData): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', margin: MARGIN, info: { Title: data.report.name, Author: 'Agent Management Service', Subject: periodText(data) } });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });
  drawCover(doc, data);
  for (const section of sectionsOf(data)) {
    doc.addPage();
    doc.font('Helvetica-Bold').fontSize(18).fillColor(INK).text(section.title, MARGIN, MARGIN);
    doc.font('Helvetica').fontSize(10).fillColor(MUTED).text(section.subtitle, MARGIN, MARGIN + 24);
    drawChart(doc, section.chart, { x: MARGIN, y: MARGIN + 50, w: doc.page.width - 2 * MARGIN, h: 260 });
    drawTable(doc, section.table, MARGIN + 330);
  }
  doc.end();
  return done;
}
