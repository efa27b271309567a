import Router from '@koa/router';
import { ROUTER_OPTIONS } from '../routing.ts';
import { succeededArtifact } from '../../src/db/reports.ts';
import { AppError, notFound } from '../../src/errors.ts';
import { isUuid } from '../../src/ids.ts';
import { ARTIFACT_PATH, artifactSignatureValid } from '../../src/reports/links.ts';
import { artifactBytes } from '../../src/reports/runs.ts';
import type { AppContext } from '../context.ts';

/**
 * A run's artifact behind its `download_url`: a signed link, no token. Read from the blob store (or, for a run
 * stored before, from PostgreSQL), which every replica shares.
 */
export function reportArtifactsRouter(): Router {
  const router = new Router(ROUTER_OPTIONS);
  router.get(`${ARTIFACT_PATH}/:id`, async (context) => {
    const ctx = context as unknown as AppContext;
    const id = context.params.id!;
    // Checked before any read: a link not signed by us learns nothing, not even whether the run exists.
    if (!isUuid(id) || !artifactSignatureValid(ctx.deps.secrets, id.toLowerCase(), ctx.query.expires, ctx.query.sig)) {
      throw new AppError(403, 'invalid_signature', 'this download link is invalid or has expired; get the run again for a new one');
    }
    const artifact = await succeededArtifact(ctx.deps.sql, id.toLowerCase());
    const bytes = artifact && await artifactBytes(ctx.deps, artifact);
    if (!artifact || !bytes) throw notFound('report artifact');
    ctx.set('Content-Disposition', `attachment; filename="${artifact.fileName.replace(/[^\w.-]/g, '_')}"`);
    ctx.set('Cache-Control', 'private, no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = artifact.contentType;
    ctx.body = bytes;
  });
  return router;
}
