import type { ContactDataStep } from '../governance/plugins.ts';
import { deleteSpooled, spooledMailNaming } from './spool.ts';

/**
 * The mail spool (DATA_DIR/mail/*.eml, without SMTP_URL): the organization's messages that name the
 * person (replies to them, notifications listing their captured data) are in the export, and the
 * erase deletes their files. Mail received is kept in the database only (its conversation).
 */
export const contactDataSteps: Record<string, ContactDataStep> = {
  mail_spool: {
    async export(_db, contact, ctx) { return spooledMailNaming(ctx.config, contact.orgId, contact); },
    async erase(_tx, contact, ctx) {
      const files = (await spooledMailNaming(ctx.config, contact.orgId, contact)).map((m) => m.file);
      return { deleted: await deleteSpooled(ctx.config, files) };
    },
  },
};
