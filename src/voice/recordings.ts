import type { Db } from '../db/index.ts';
import type { BlobStore } from '../storage/blobs.ts';
import { deleteCallRecordingRow, upsertCallRecording } from '../db/voice.ts';
import { wavFile } from './audio.ts';
import { FRAME_SAMPLES, SAMPLE_RATE } from './mulaw.ts';

/**
 * A streamed call's recording: both sides on one timeline, mixed into a mono WAV at 8 kHz, kept in
 * the blob store under `recordings/<org>/<agent>/<conversation>.wav` with a `call_recordings` row.
 */

/**
 * The call's two sides as they were heard: the caller's frames one after the other (the carrier
 * sends them in real time), the agent's from the moment its audio starts playing, cut where a
 * barge-in cleared it.
 */
export class CallMixer {
  private caller: Int16Array[] = [];
  private agent = new Map<number, Int16Array>();
  private agentCursor = 0;

  /** Position of the caller's audio so far, in frames: the call's clock. */
  get now(): number { return this.caller.length; }

  addCaller(frame: Int16Array): void { this.caller.push(frame); }

  /** An agent frame queued for playing: after the previous one, and never before now. */
  addAgent(frame: Int16Array): void {
    this.agentCursor = Math.max(this.agentCursor, this.now);
    this.agent.set(this.agentCursor++, frame);
  }

  /** The carrier dropped what it had not played yet (a `clear`): the agent's audio after now is gone. */
  clearAgent(): void {
    for (const at of this.agent.keys()) if (at >= this.now) this.agent.delete(at);
    this.agentCursor = this.now;
  }

  /** The mixed samples. */
  mix(): Int16Array {
    const frames = Math.max(this.caller.length, this.agentCursor);
    const out = new Int16Array(frames * FRAME_SAMPLES);
    for (let f = 0; f < frames; f++) {
      const a = this.caller[f];
      const b = this.agent.get(f);
      for (let i = 0; i < FRAME_SAMPLES; i++) {
        const s = (a?.[i] ?? 0) + (b?.[i] ?? 0);
        out[f * FRAME_SAMPLES + i] = Math.max(-32768, Math.min(32767, s));
      }
    }
    return out;
  }
}

export const recordingKey = (orgId: string, agentId: string, conversationId: string) => `recordings/${orgId}/${agentId}/${conversationId}.wav`;
/** Where every recording of an agent is: the purge deletes the folder. */
export const agentRecordingsPrefix = (orgId: string, agentId: string) => `recordings/${orgId}/${agentId}`;

let store: BlobStore | null = null;

/** The blob store recordings go to; set once by the composition root (the purge and retention delete through it too). */
export function useRecordingStore(blobs: BlobStore): void { store = blobs; }

export function recordingStore(): BlobStore {
  if (!store) throw new Error('no blob store for recordings: useRecordingStore was not called');
  return store;
}

/** Stores the mixed call (replacing an earlier one of the same conversation). */
export async function saveCallRecording(db: Db, input: { orgId: string; agentId: string; conversationId: string; samples: Int16Array }): Promise<void> {
  const key = recordingKey(input.orgId, input.agentId, input.conversationId);
  const bytes = wavFile(input.samples, SAMPLE_RATE);
  await recordingStore().put(key, bytes, 'audio/wav');
  await upsertCallRecording(db, {
    conversationId: input.conversationId, orgId: input.orgId, agentId: input.agentId, blobKey: key, contentType: 'audio/wav',
    bytes: bytes.length, durationMs: Math.round((input.samples.length / SAMPLE_RATE) * 1000),
  });
}

/**
 * Deletes a conversation's recording, row and blob; nothing to delete is not an error. Call it
 * before the conversation's row goes (its row would cascade and leave the blob): the conversation's
 * delete does, and retention (issue 47) should.
 */
export async function deleteConversationRecording(db: Db, orgId: string, conversationId: string): Promise<void> {
  const key = await deleteCallRecordingRow(db, orgId, conversationId);
  if (key) await recordingStore().delete(key);
}
