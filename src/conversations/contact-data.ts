import { conversationIdsOfContact, eraseConversations, exportConversations } from '../db/contact-data.ts';
import type { ContactDataStep } from '../governance/plugins.ts';

/** The Temporal runs of a conversation whose histories carry its messages and captured data. */
const historiesOf = (id: string) => [`conversation:${id}`, `conversation-evaluation:${id}`, `notify:${id}:notification_email`, `notify:${id}:notification_phone`];

/**
 * The person's conversations, with messages, captured data, tool calls and annotations. First in
 * the erase: it finds them through campaign calls and carrier sessions, which later steps delete.
 */
export const contactDataSteps: Record<string, ContactDataStep> = {
  conversations: {
    order: 10,
    async export(db, contact) { return exportConversations(db, await conversationIdsOfContact(db, contact)); },
    async erase(tx, contact) {
      const ids = await conversationIdsOfContact(tx, contact);
      return { deleted: await eraseConversations(tx, ids), histories: ids.flatMap(historiesOf) };
    },
  },
};
