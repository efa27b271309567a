import { conversationIdsOfContact, eraseConversations, exportConversations } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';
import { openCaptured } from '../db/conversations.ts';

/** The Temporal runs of a conversation whose histories carry its messages and captured data. */
const historiesOf = (id: string) => [`conversation:${id}`, `conversation-evaluation:${id}`, `notify:${id}:notification_email`, `notify:${id}:notification_phone`];

/**
 * The person's conversations, with messages, captured data, tool calls and annotations. First in
 * the erase: it finds them through campaign calls and carrier sessions, which later steps delete.
 */
export const contactDataSteps: Record<string, ContactDataStep> = {
  conversations: {
    order: 10,
    async export(db, contact, ctx) {
      // Captured data is sealed at rest (issue 47): the export shows it as captured.
      const rows = await exportConversations(db, await conversationIdsOfContact(db, contact)) as { id: string; captured_data: Record<string, unknown> }[];
      return rows.map((c) => ({ ...c, captured_data: openCaptured(ctx.secrets, c.id, c.captured_data ?? {}) }));
    },
    async erase(tx, contact) {
      const ids = await conversationIdsOfContact(tx, contact);
      return { deleted: await eraseConversations(tx, ids), histories: ids.flatMap(historiesOf) };
    },
  },
};
