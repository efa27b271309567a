import type { RetentionStep } from '../governance/plugins.ts';
import { deleteSpooled, spooledMailOf } from './spool.ts';

/**
 * The mail spool (DATA_DIR/mail/*.eml, without SMTP_URL) goes by the organization's `inbound_mail`
 * window: the mail the service sent for it (replies, notifications, reports) past the window is
 * deleted, oldest first, a batch at a time; a file already gone counts as deleted.
 */
export const retentionSteps: Record<string, RetentionStep> = {
  mail_spool: {
    key: 'inbound_mail',
    perAgent: false,
    async deleteBatch(_tx, scope, batchSize, ctx) {
      const old = (await spooledMailOf(ctx.config, scope.orgId)).filter((m) => m.writtenAt < scope.cutoff).slice(0, batchSize);
      return deleteSpooled(ctx.config, old.map((m) => m.file));
    },
  },
};
