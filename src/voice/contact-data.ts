import { conversationIdsOfContact } from '../db/contact-data.ts';
import { recordingsOfConversations } from '../db/voice.ts';
import type { ContactDataStep } from '../governance/plugins.ts';
import { deleteConversationRecording } from './recordings.ts';

/**
 * The person's call recordings (issue 47): listed in the export with where to download each, deleted, row and audio,
 * by the erase. Before the conversations' step, which finds the same conversations and would cascade the rows away
 * and leave the audio.
 */
export const contactDataSteps: Record<string, ContactDataStep> = {
  recordings: {
    order: 5,
    async export(db, contact) {
      const rows = await recordingsOfConversations(db, await conversationIdsOfContact(db, contact));
      return rows.map((r) => ({ ...r, download_path: `/api/v1/rest/conversations/${r.conversation_id}/recording` }));
    },
    async erase(tx, contact) {
      const rows = await recordingsOfConversations(tx, await conversationIdsOfContact(tx, contact));
      for (const r of rows) await deleteConversationRecording(tx, contact.orgId, r.conversation_id);
      return { deleted: rows.length };
    },
  },
};
