import type { Report, ReportData } from '../schemas/reports.ts';

export interface Artifact { bytes: Buffer; contentType: string; fileName: string }

const slug = (name: string) => name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 60) || 'report';

/**
 * The artifact of a run in the report's format. The renderers are loaded on first use: an API
 * process (which never renders) does not hold pdfkit and pptxgenjs.
 */
export async function renderArtifact(format: Report['format'], data: ReportData): Promise<Artifact> {
  const fileName = (extension: string) => `${slug(data.report.name)}-${data.period.start.slice(0, 10)}.${extension}`;
  if (format === 'document') {
    const { renderPdf } = await import('./render-pdf.ts');
    return { bytes: await renderPdf(data), contentType: 'application/pdf', fileName: fileName('pdf') };
  }
  if (format === 'presentation') {
    const { renderPptx } = await import('./render-pptx.ts');
    return { bytes: await renderPptx(data), contentType: 'application/vnd.openxmlformats-officedocument.presentationml.presentation', fileName: fileName('pptx') };
  }
  return { bytes: Buffer.from(JSON.stringify(data, null, 2)), contentType: 'application/json', fileName: fileName('json') };
}

const warming = new Map<Report['format'], Promise<void>>();

/**
 * Loads the renderer of `format` (for a document: pdfkit, svg-to-pdfkit, Vega and Vega-Lite, about
 * 0.3-0.5 s of module loading on this 2-core machine), once per process, so that a run's render step
 * finds it loaded. The aggregate step starts it once its figures are in. Not done at
 * start-up, where Vega alone would add about 30 MB to idle memory. A failure is only a missed head
 * start: the render step loads the renderer itself (and says what failed).
 */
export function warmRenderer(format: Report['format']): Promise<void> {
  let warm = warming.get(format);
  if (!warm) {
    warm = format === 'document' ? Promise.all([import('./render-pdf.ts'), import('./chart-svg.ts').then((m) => m.loadVega())]).then(() => undefined)
      : format === 'presentation' ? import('./render-pptx.ts').then(() => undefined)
        : Promise.resolve();
    warming.set(format, warm);
    warm.catch(() => {
      warming.delete(format);
    });
  }
  return warm;
}
