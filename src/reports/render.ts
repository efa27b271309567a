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
