import {
  createTrainingNote, getTrainingNote, listTrainingNotes, patchTrainingNote, removeTrainingNote,
} from '../../src/training-notes/index.ts';
import { IdParams, PageQuery } from '../../src/schemas/common.ts';
import {
  MAX_TRAINING_NOTES, TrainingNoteCreateSchema, TrainingNoteListSchema, TrainingNoteParams, TrainingNotePatchSchema, TrainingNoteSchema,
} from '../../src/schemas/training-notes.ts';
import { pageReply, route, type RouteFamily } from '../routing.ts';

const BASE = '/api/v1/rest';

export const trainingNotesFamily: RouteFamily = {
  base: BASE,
  order: 140,
  tag: 'Training notes',
  description: 'Corrections the agent must always give: when a visitor asks what a note asks (in other words too), the agent answers with the note, ahead of anything from its site, citing no source.',
  routes: [
    route({
      method: 'GET', path: '/agents/:id/training-notes', operationId: 'list_training_notes', summary: 'List an agent\'s training notes, newest first',
      permissions: ['agents.read'], params: IdParams, query: PageQuery,
      responses: { 200: { description: 'A page of notes', schema: TrainingNoteListSchema } },
      async handler({ params, query, principal, deps }) {
        return pageReply(await listTrainingNotes(deps, principal.orgId, params.id, query), query);
      },
    }),
    route({
      method: 'GET', path: '/agents/:id/training-notes/:noteId', operationId: 'get_training_note', summary: 'Get a training note',
      permissions: ['agents.read'], params: TrainingNoteParams,
      responses: { 200: { description: 'The note', schema: TrainingNoteSchema } },
      async handler({ params, principal, deps }) {
        return { status: 200, body: await getTrainingNote(deps, principal.orgId, params.id, params.noteId) };
      },
    }),
    route({
      method: 'POST', path: '/agents/:id/training-notes', operationId: 'create_training_note', summary: 'Add a training note',
      description: `question up to 500 characters, answer up to 2,000. At most ${MAX_TRAINING_NOTES} notes per agent: one more is 409 \`invalid_state\`.`,
      permissions: ['agents.write'], params: IdParams, body: TrainingNoteCreateSchema,
      responses: { 201: { description: 'The new note', schema: TrainingNoteSchema }, 409: { description: '`invalid_state`: the agent holds the most notes already' } },
      async handler({ params, body, principal, deps }) {
        const note = await createTrainingNote(deps, principal.orgId, params.id, body);
        return { status: 201, body: note, headers: { Location: `${BASE}/agents/${params.id}/training-notes/${note.id}` } };
      },
    }),
    route({
      method: 'PATCH', path: '/agents/:id/training-notes/:noteId', operationId: 'update_training_note', summary: 'Change a training note',
      permissions: ['agents.write'], params: TrainingNoteParams, body: TrainingNotePatchSchema,
      responses: { 200: { description: 'The updated note', schema: TrainingNoteSchema } },
      async handler({ params, body, principal, deps }) {
        return { status: 200, body: await patchTrainingNote(deps, principal.orgId, params.id, params.noteId, body) };
      },
    }),
    route({
      method: 'DELETE', path: '/agents/:id/training-notes/:noteId', operationId: 'delete_training_note', summary: 'Delete a training note',
      permissions: ['agents.write'], params: TrainingNoteParams,
      responses: { 204: { description: 'Deleted' } },
      async handler({ params, principal, deps }) {
        await removeTrainingNote(deps, principal.orgId, params.id, params.noteId);
        return { status: 204 };
      },
    }),
  ],
};
