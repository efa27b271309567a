import { channel } from 'node:diagnostics_channel';
import type { WebSocket } from 'ws';
import { findAgent } from '../db/agents.ts';
import { endSession, findLiveSession, type CarrierSession } from '../db/carrier-sessions.ts';
import { findPhoneNumberById } from '../db/phone-numbers.ts';
import { findConversationRecord, insertMessages, listMessages, type ConversationRecord } from '../db/conversations.ts';
import { findVoiceProfile } from '../db/voice-profiles.ts';
import { keepHeardText, recordTurnTimings, type StreamTokenBinding } from '../db/voice.ts';
import { addSystemMessage, endConversation, sendVisitorMessage, warmGrounding } from '../conversations/lifecycle.ts';
import { callClosed } from '../conversations/call-outcomes.ts';
import type { Agent } from '../schemas/agents.ts';
import type { TranscriptMessage } from '../runtime/types.ts';
import { transferCall, voiceTurn, type InboundDeps } from '../telephony/inbound.ts';
import { callSettingsOf, timeUpGoodbye, type CallSettings } from '../telephony/phone-settings.ts';
import { voiceTurnUrl } from '../telephony/webhook-urls.ts';
import { sentencesOf } from './audio.ts';
import { SentenceQueue } from './sentence-queue.ts';
import { spokenText } from '../runtime/voice.ts';
import { runtimeFor } from '../conversations/agent-runtime.ts';
import { ttsVoiceOf, type SpeechToText, type SttStream, type TextToSpeech, type TtsVoice } from './engines.ts';
import { decodeMulaw, FRAME_SAMPLES, MulawFramer, SAMPLE_RATE } from './mulaw.ts';
import { CallMixer, saveCallRecording } from './recordings.ts';
import { createVad, endpointMs, SILENCE_FED } from './vad.ts';
import { callWords } from './call-words.ts';

/**
 * One streamed call (issue 44): Twilio's media stream protocol on a WebSocket whose token was
 * redeemed. The caller's μ-law frames go through voice activity detection; an utterance is
 * recognized while it is spoken and, at its endpoint, becomes the conversation's turn (the same
 * `voiceTurn` as a `<Gather>` call: runtime, transfer rules, a campaign callee's close). The reply is
 * synthesized sentence by sentence and sent as `media` frames, each sentence followed by a `mark`;
 * the marks the carrier echoes say what was played. The caller speaking over the agent (with
 * `interruptions: allow`) sends `clear`, and the transcript keeps what was heard. Audio never goes
 * through Temporal: the conversation's lifecycle workflow hears the turns and the end.
 */

export interface VoiceDeps extends InboundDeps { stt: SpeechToText; tts: TextToSpeech; baseUrl: string }

/**
 * Each barge-in, for bench:voice's split of its figure (the detector's frames, then the wait for the event loop):
 * the call's stream, its inbound frame that confirmed speech (counted from the stream's first), and when (`performance.now()`)
 * the detector confirmed it and the `clear` was written. Nothing is published without a subscriber.
 */
export const bargeInChannel = channel('ams:voice:barge-in');
export interface BargeInEvent { streamSid: string; frame: number; detectedAt: number; clearSentAt: number }

/**
 * Each turn's clock, for bench:voice's split of the service's figure (`performance.now()`): the endpoint's frame handled,
 * the recognizer told the utterance was over (its early finish, or the endpoint), its words back, the turn begun with
 * them, the reply had, its first audio frame sent. Nothing is published without a subscriber.
 */
export const turnChannel = channel('ams:voice:turn');
export interface TurnEvent {
  streamSid: string; turn: number; endpointAt: number; finishedAt: number; heardAt: number; transcriptAt: number;
  replyAt: number | null; firstAudioAt: number | null;
}

/** Frames of audio time per second. */
const FRAMES_PER_SECOND = SAMPLE_RATE / FRAME_SAMPLES;


/** A reply being spoken: its sentences sent, those the carrier played (`heard`); `open` while a streamed reply is still written. */
interface Spoken { messageId: string | null; text: string; heard: string[]; sentences: number; open?: boolean }

/** A reply's latency marks, for its turn's timings. */
interface TurnClock {
  turn: number; speechEndedAt: Date; transcriptAt?: Date; replyAt?: Date; firstAudioAt?: Date;
  /** For turnChannel's subscribers only (performance.now()). */
  marks?: { endpointAt: number; finishedAt: number; heardAt: number; transcriptAt: number; replyAt?: number; firstAudioAt?: number };
}

/**
 * A reply's source when its text is whole (the offline runtime, a greeting, a goodbye). The LLM
 * runtime's reply is spoken while it streams: its tokens go through a `SentenceQueue` (takeTurn).
 */
export type ReplySource = AsyncIterable<{ messageId: string | null; text: string }>;

async function* listed(sentences: string[]): AsyncIterable<string> { yield* sentences; }

/** The sentences of a streamed reply as they are spoken (no URL, no markup: spokenText), each also kept in `said`. */
async function* spokenSentences(queue: SentenceQueue, language: string | null, said: string[]): AsyncIterable<string> {
  for await (const sentence of queue) {
    const text = spokenText(sentence, language);
    if (!text) continue;
    said.push(text);
    yield text;
  }
}

async function* wholeReplies(messages: { id: string | null; text: string }[]): ReplySource {
  for (const m of messages) yield { messageId: m.id, text: m.text };
}

export class CallStream {
  private streamSid = '';
  private started = false;
  private ended = false;
  private conversation!: ConversationRecord;
  private agent!: Agent;
  private session: CarrierSession | null = null;
  private settings!: CallSettings;
  private voice!: TtsVoice;
  private vad!: ReturnType<typeof createVad>;
  private mixer: CallMixer | null = null;
  private stt: SttStream | null = null;
  /** The words of this call's agent, for the recognizer (call-words.ts). */
  private words: Promise<readonly string[]> | undefined;
  /** The transcript of an utterance finished early (finishEarly), while its endpoint is awaited. */
  private early: Promise<string> | null = null;
  /** Silent frames of a pause not yet given to the recognizer (beyond SILENCE_FED): given should words follow, else dropped. */
  private held: Int16Array[] = [];
  /** Silent frames after which an utterance's recognizer is finished early: half the endpoint's. */
  private earlyFrames = 12;
  /** Incremented by a barge-in: the reply being sent stops. */
  private generation = 0;
  /** Marks sent and not yet echoed: the reply and sentence each closes. */
  private marks = new Map<string, { spoken: Spoken; sentence: string }>();
  private spoken: Spoken[] = [];
  private sending = false;
  private turn = 0;
  private frames = 0;
  private turns: Promise<void> = Promise.resolve();
  private afterPlayed: (() => void) | null = null;
  private closing = false;
  private inbox: Promise<void> = Promise.resolve();
  private endpoint = 500;

  constructor(private readonly deps: VoiceDeps, private readonly ws: WebSocket, private readonly binding: StreamTokenBinding) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(data.toString()) as Record<string, unknown>;
      } catch {
        return;
      }
      // One at a time, in order: frames wait for the `start` they follow to be set up.
      this.inbox = this.inbox.then(() => this.onMessage(message)).catch((err: unknown) => this.fail(err));
    });
    ws.on('close', (code) => {
      if (!this.ended) void this.end(`media stream lost (WebSocket closed with code ${code})`, { hangUp: true }).catch((err: unknown) => this.deps.log.error({ err }, 'streamed call end failed'));
    });
    ws.on('error', () => {});
  }

  private fail(err: unknown): void {
    this.deps.log.error({ err, conversation_id: this.binding.conversationId }, 'streamed call failed');
    if (!this.ended) void this.end('the streamed call failed', { hangUp: true }).catch(() => {});
  }

  private async onMessage(message: Record<string, unknown>): Promise<void> {
    switch (message.event) {
      case 'start': return this.onStart(message.start as Record<string, unknown> | undefined, String(message.streamSid ?? ''));
      case 'media': return this.onMedia(message.media as { payload?: string } | undefined);
      case 'mark': return this.onMark((message.mark as { name?: string } | undefined)?.name ?? '');
      case 'stop': return this.end('the caller hung up', { hangUp: false });
      default: return undefined;
    }
  }

  private async onStart(start: Record<string, unknown> | undefined, streamSid: string): Promise<void> {
    if (this.started) return;
    // The token is bound to one call: a stream that names another is closed (policy violation).
    if (!start || start.callSid !== this.binding.callSid) {
      this.ended = true;
      this.ws.close(1008, 'stream token does not match this call');
      return;
    }
    this.started = true;
    this.streamSid = String(start.streamSid ?? streamSid);
    const conversation = await findConversationRecord(this.deps.sql, this.binding.conversationId);
    const agent = conversation ? await findAgent(this.deps.sql, this.binding.orgId, conversation.agentId) : null;
    if (!conversation || !agent || conversation.orgId !== this.binding.orgId || conversation.status === 'ended') {
      this.ended = true;
      this.ws.close(1000, 'call not live');
      return;
    }
    this.conversation = conversation;
    this.agent = agent;
    this.session = await findLiveSession(this.deps.sql, 'voice', this.binding.callSid);
    // The number the call came in on, read once while the greeting plays rather than at every turn (issue 44).
    this.number = this.ourNumber();
    this.number.catch(() => {});
    this.settings = callSettingsOf(agent);
    const profile = agent.voice_profile_id ? await findVoiceProfile(this.deps.sql, this.binding.orgId, agent.voice_profile_id) : null;
    this.voice = ttsVoiceOf(conversation.language, profile);
    this.endpoint = endpointMs(agent.responsiveness);
    this.vad = createVad({ endpointMs: this.endpoint });
    this.earlyFrames = Math.max(1, Math.round(this.endpoint / 2 / (1000 / FRAMES_PER_SECOND)));
    if (this.settings.record) this.mixer = new CallMixer();
    // The words the recognizer listens for (the agent's own with common ones), read while the greeting plays.
    this.words = callWords(this.deps.sql, this.binding.orgId, agent, this.settings.record ? this.settings.recordingConsent : null);
    this.deps.stt.warm?.(this.words);
    this.stt = this.deps.stt.open(this.words);
    // The greeting (stored when the call was answered), after the consent line of a recorded call.
    const opening: { id: string | null; text: string }[] = [];
    if (this.settings.record && this.settings.recordingConsent) {
      const [consent] = await insertMessages(this.deps.sql, conversation.id, [{ role: 'agent', text: this.settings.recordingConsent }]);
      opening.push({ id: consent!.id, text: consent!.text });
    }
    const greeting = (await listMessages(this.deps.sql, conversation.id)).filter((m) => m.role === 'agent' && m.text !== this.settings.recordingConsent);
    opening.push(...greeting.map((m) => ({ id: m.id, text: m.text })));
    this.queue(async () => {
      await this.speak(wholeReplies(opening), null);
      // While the greeting plays, the answer engine's first use (WordNet, compromise, the encoder, the agent's index),
      // not on the caller's first turn; in the background, not in the turns' queue.
      void warmGrounding(this.deps.sql, agent.id).catch((err: unknown) => this.deps.log.warn({ err }, 'the answer engine was not warmed'));
    });
  }

  private async onMedia(media: { payload?: string } | undefined): Promise<void> {
    if (!this.started || this.ended || !media?.payload) return;
    const frame = decodeMulaw(Buffer.from(media.payload, 'base64'));
    this.frames++;
    this.mixer?.addCaller(frame);
    if (this.settings.maxMinutes !== null && !this.closing && this.frames >= this.settings.maxMinutes * 60 * FRAMES_PER_SECOND) {
      this.closing = true;
      this.queue(() => this.endAtTimeLimit());
      return;
    }
    if (this.closing) return;
    // Over the agent's voice, speech is confirmed a frame sooner (vad.ts, EAGER_QUARTERS): the barge-in waits less.
    const interrupting = this.agentSpeaking() && this.agent.interruptions !== 'wait';
    const event = this.vad.push(frame, { eager: interrupting });
    if (event?.type === 'speech_start' && interrupting) this.bargeIn();
    // The utterance's first sound, heard before speech was certain, goes to the recognizer first.
    if (event?.type === 'speech_start') for (const before of event.preroll) this.stt?.write(before);
    else if (this.vad.speaking && this.early) {
      // Words again after the pause: the early transcript is dropped, and the next recognizer hears the whole utterance.
      if (this.vad.quietFrames === 0) {
        this.early = null;
        for (const heard of this.vad.utterance) this.stt?.write(heard);
      }
    } else if (this.vad.speaking && this.vad.quietFrames > SILENCE_FED) this.held.push(frame);
    else if (this.vad.speaking || (event?.type === 'speech_end' && !this.early)) {
      // A pause that turned out to be within the utterance: the recognizer hears it whole, then the words.
      for (const pause of this.held.splice(0)) this.stt?.write(pause);
      this.stt?.write(frame);
    }
    if (this.vad.speaking && !this.early && this.vad.quietFrames === this.earlyFrames) this.finishEarly();
    if (event?.type === 'speech_end') {
      // The caller stopped speaking when the silence that ended the turn began (frames arrive in real time).
      const clock: TurnClock = { turn: ++this.turn, speechEndedAt: new Date(Date.now() - this.endpoint) };
      let heard: Promise<string>;
      if (this.early) {
        heard = this.early;
        this.early = null;
      } else {
        const stt = this.stt;
        this.stt = this.deps.stt.open(this.words);
        heard = this.timed(stt ? stt.finish() : Promise.resolve(''));
      }
      if (turnChannel.hasSubscribers) {
        const finish = this.finishMarks.get(heard);
        clock.marks = { endpointAt: performance.now(), finishedAt: finish?.finishedAt ?? performance.now(), heardAt: 0, transcriptAt: 0 };
        void heard.then(() => { clock.marks!.heardAt = finish?.heardAt || performance.now(); }, () => {});
      }
      this.queue(() => this.takeTurn(heard, clock));
    }
  }

  /**
   * Halfway through the silence that would end the turn, the recognizer is told the utterance is over and a fresh one
   * takes its place: its last words are decoded while the endpoint is still awaited, not after it. Should the caller
   * speak again before the endpoint, its transcript is dropped and the fresh recognizer is given the whole utterance.
   */
  private finishEarly(): void {
    // The pause's silence beyond its first frames is not decoded: the utterance is over.
    this.held = [];
    const stt = this.stt;
    this.stt = this.deps.stt.open(this.words);
    const heard = this.timed(stt ? stt.finish() : Promise.resolve(''));
    heard.catch(() => {});
    this.early = heard;
    // While the endpoint is awaited, the runtime reads what it can of the words (the offline runtime: the question), so
    // that the turn finds it done; words again before the endpoint drop this transcript, and that reading goes unused.
    // (An agent answered by its organization's LLM provider is not: that runtime reads nothing ahead, and which it is takes a read.)
    if (this.agent.model?.provider_id) return;
    void heard.then(async (said) => {
      if (this.early !== heard || this.ended || !said.trim()) return;
      const runtime = await runtimeFor(this.deps, this.binding.orgId, this.agent);
      if (this.early === heard && !this.ended) runtime.readAhead?.(said);
    }).catch(() => {});
  }

  /** When each recognizer was finished and its words came back, for turnChannel's subscribers. */
  private finishMarks = new WeakMap<Promise<string>, { finishedAt: number; heardAt: number }>();
  private timed(heard: Promise<string>): Promise<string> {
    if (!turnChannel.hasSubscribers) return heard;
    const marks = { finishedAt: performance.now(), heardAt: 0 };
    this.finishMarks.set(heard, marks);
    heard.then(() => { marks.heardAt = performance.now(); }, () => {});
    return heard;
  }

  /** Runs `step` after the call's earlier steps (turns, notes), in order; a failure is logged and ends the call. */
  private queue(step: () => Promise<void>): void {
    this.turns = this.turns.then(step).catch((err: unknown) => this.fail(err));
  }

  private agentSpeaking(): boolean { return this.sending || this.marks.size > 0; }

  private onMark(name: string): void {
    const mark = this.marks.get(name);
    if (!mark) return;
    this.marks.delete(name);
    mark.spoken.heard.push(mark.sentence);
    if (!this.agentSpeaking() && this.afterPlayed) {
      const next = this.afterPlayed;
      this.afterPlayed = null;
      next();
    }
  }

  /** The caller spoke over the agent: the carrier drops what it has not played, and the transcript keeps what was heard. */
  private bargeIn(): void {
    const detectedAt = bargeInChannel.hasSubscribers ? performance.now() : 0;
    this.generation++;
    this.send({ event: 'clear', streamSid: this.streamSid });
    if (detectedAt) bargeInChannel.publish({ streamSid: this.streamSid, frame: this.frames, detectedAt, clearSentAt: performance.now() } satisfies BargeInEvent);
    this.mixer?.clearAgent();
    this.marks.clear();
    const cut = this.spoken.filter((s) => s.open || s.heard.length < s.sentences);
    this.spoken = [];
    // Noted in turn order, before the turn the interrupting words become.
    this.queue(async () => {
      for (const s of cut) if (s.messageId) await keepHeardText(this.deps.sql, this.conversation.id, s.messageId, s.heard.join(' '));
      if (cut.length) await addSystemMessage(this.deps.sql, this.conversation.id, 'The caller interrupted the agent; the transcript keeps what was heard');
    });
  }

  /** Sends the replies sentence by sentence: each is synthesized while the one before plays. */
  private async speak(replies: ReplySource, clock: TurnClock | null): Promise<boolean> {
    const generation = this.generation;
    this.sending = true;
    try {
      for await (const reply of replies) {
        const sentences = sentencesOf(reply.text);
        const spoken: Spoken = { messageId: reply.messageId, text: reply.text, heard: [], sentences: sentences.length };
        this.spoken.push(spoken);
        if (!await this.speakSentences(spoken, listed(sentences), generation, clock)) return false;
      }
      return true;
    } finally {
      this.sending = false;
    }
  }

  /**
   * Sends `sentences` as `media` frames, each followed by its `mark`; the next one is taken (and
   * synthesized) while this one plays. False when a barge-in or the call's end stopped it. A streamed
   * reply (`spoken.open`) counts its sentences as they come and is the agent speaking from its first one.
   */
  private async speakSentences(spoken: Spoken, sentences: AsyncIterable<string>, generation: number, clock: TurnClock | null): Promise<boolean> {
    const source = sentences[Symbol.asyncIterator]();
    const pull = async () => {
      const item = await source.next();
      if (item.done) return null;
      const samples = this.deps.tts.synthesize(item.value, this.voice);
      samples.catch(() => {});
      return { sentence: item.value, samples };
    };
    const streamed = spoken.open === true;
    try {
      for (let next = pull(); ;) {
        const item = await next;
        if (!item) return true;
        const samples = await item.samples;
        next = pull();
        if (generation !== this.generation || this.ended) {
          next.catch(() => {});
          return false;
        }
        if (streamed) {
          spoken.sentences++;
          this.sending = true;
        }
        const framer = new MulawFramer();
        for (const frame of [...framer.pushSamples(samples), ...framer.flush()]) {
          this.send({ event: 'media', streamSid: this.streamSid, media: { payload: frame.toString('base64') } });
          if (clock && !clock.firstAudioAt) {
            clock.firstAudioAt = new Date();
            if (clock.marks) clock.marks.firstAudioAt = performance.now();
          }
          this.mixer?.addAgent(decodeMulaw(frame));
        }
        const name = `${generation}.${this.markCount++}`;
        this.marks.set(name, { spoken, sentence: item.sentence });
        this.send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
      }
    } finally {
      if (streamed) this.sending = false;
    }
  }

  private markCount = 0;
  /** The number the call came in on ('' without a carrier session), read once when the stream starts. */
  private number: Promise<string> = Promise.resolve('');

  /** One utterance: its transcript, the agent's turn (or a transfer, or the call's close), the reply spoken, the timings kept. */
  private async takeTurn(heard: Promise<string>, clock: TurnClock): Promise<void> {
    const said = (await heard).trim();
    clock.transcriptAt = new Date();
    if (clock.marks) clock.marks.transcriptAt = performance.now();
    if (!said || this.ended || this.closing) return;
    let replies: TranscriptMessage[] = [];
    let signalled: Promise<void> = Promise.resolve();
    // Both at once (the number was read when the call started): the turn waits for one round trip at most.
    const [ourNumber, runtime] = await Promise.all([this.number, runtimeFor(this.deps, this.binding.orgId, this.agent)]);
    // With the LLM runtime, the reply is spoken sentence by sentence while the model writes it (issue 44).
    const streamed = runtime.kind === 'llm'
      ? { queue: new SentenceQueue(), spoken: { messageId: null, text: '', heard: [], sentences: 0, open: true } as Spoken, said: [] as string[] }
      : null;
    let speaking: Promise<boolean> | null = null;
    const result = await voiceTurn(this.deps, {
      orgId: this.binding.orgId, agent: this.agent, conversationId: this.conversation.id, language: this.conversation.language, said,
      action: voiceTurnUrl(this.deps.baseUrl, this.turn + 1), ourNumber,
      answer: async (words) => {
        if (!streamed) {
          // The reply is spoken while the lifecycle hears of the turn; the turn ends once it has (below).
          replies = await sendVisitorMessage(this.deps, this.agent, this.conversation, words, { role: 'caller', whileSignalled: (sent) => { signalled = sent; } });
          clock.replyAt = new Date();
          if (clock.marks) clock.marks.replyAt = performance.now();
          return replies.map((m) => m.text);
        }
        this.spoken.push(streamed.spoken);
        speaking = this.speakSentences(streamed.spoken, spokenSentences(streamed.queue, this.conversation.language ?? this.agent.default_language, streamed.said),
          this.generation, clock);
        try {
          replies = await sendVisitorMessage(this.deps, this.agent, this.conversation, words, {
            role: 'caller',
            // The first token is the reply's time (the turn's timings).
            stream: { onText: (delta) => { clock.replyAt ??= new Date(); if (clock.marks) clock.marks.replyAt ??= performance.now(); streamed.queue.push(delta); } },
          });
        } finally {
          streamed.queue.end();
        }
        clock.replyAt ??= new Date();
        if (clock.marks) clock.marks.replyAt ??= performance.now();
        return replies.map((m) => m.text);
      },
      ...(this.session ? {
        handOver: (rule, words, announcement) => transferCall(this.deps, {
          session: this.session!, rule, said: words, announcement, ourNumber, baseUrl: this.deps.baseUrl, action: voiceTurnUrl(this.deps.baseUrl, this.turn + 1),
        }),
      } : {}),
    });
    if (result.transfer) {
      // The carrier takes the call to the transfer's TwiML (announcement and `<Dial>`): the stream ends there.
      this.ended = true;
      await this.deps.carrier.playOnCall(this.binding.callSid, result.twiml);
      this.ws.close(1000, 'transferred');
      return;
    }
    // Whether the answer closed a campaign call (a callee's "not interested"): read while the reply is spoken, since the
    // call ends only once it has played; the reply's first audio does not wait for this round trip (issue 44).
    const closes = callClosed(this.deps.sql, this.conversation.id);
    closes.catch(() => {});
    const played = streamed && speaking ? await this.afterStreamed(streamed, speaking, replies, clock)
      : await this.speak(wholeReplies(replies.map((m) => ({ id: m.id, text: m.text }))), clock);
    await recordTurnTimings(this.deps.sql, {
      orgId: this.binding.orgId, agentId: this.agent.id, conversationId: this.conversation.id, turn: clock.turn,
      speechEndedAt: clock.speechEndedAt, transcriptAt: clock.transcriptAt, replyAt: clock.replyAt ?? clock.transcriptAt, firstAudioAt: clock.firstAudioAt ?? null,
      interrupted: !played,
    });
    if (clock.marks && turnChannel.hasSubscribers) {
      turnChannel.publish({ streamSid: this.streamSid, turn: clock.turn, ...clock.marks, replyAt: clock.marks.replyAt ?? null, firstAudioAt: clock.marks.firstAudioAt ?? null } satisfies TurnEvent);
    }
    await signalled;
    if (await closes) await this.whenPlayed(() => this.end('the agent closed the call', { hangUp: true }));
  }

  /**
   * The end of a streamed reply: once stored, the transcript keeps what was spoken (sentence by sentence, cleaned for
   * the ear, where the stored reply is the whole text made short), and a reply not streamed (a data tool's apology)
   * is spoken after it. A barge-in notes what was heard of it instead, by the message id known from here on.
   */
  private async afterStreamed(streamed: { spoken: Spoken; said: string[] }, speaking: Promise<boolean>, replies: TranscriptMessage[], clock: TurnClock): Promise<boolean> {
    const played = await speaking;
    const [first, ...rest] = replies;
    streamed.spoken.open = false;
    streamed.spoken.messageId = first?.id ?? null;
    const said = streamed.said.join(' ');
    streamed.spoken.text = said;
    if (!played || !first) return played;
    if (said && said !== first.text) await keepHeardText(this.deps.sql, this.conversation.id, first.id, said);
    const unspoken = rest.filter((m) => !said.includes(m.text));
    return unspoken.length ? this.speak(wholeReplies(unspoken.map((m) => ({ id: m.id, text: m.text }))), clock) : true;
  }

  /** max_call_minutes reached (in the call's audio time): the goodbye is said, then the line is hung up. */
  private async endAtTimeLimit(): Promise<void> {
    if (this.ended) return;
    const goodbye = timeUpGoodbye(this.conversation.language);
    const [message] = await insertMessages(this.deps.sql, this.conversation.id, [{ role: 'agent', text: goodbye }]);
    await addSystemMessage(this.deps.sql, this.conversation.id, `Call ended at its ${this.settings.maxMinutes}-minute limit (phone_settings.max_call_minutes)`);
    this.generation++;
    this.marks.clear();
    await this.speak(wholeReplies([{ id: message!.id, text: goodbye }]), null);
    await this.whenPlayed(() => this.end('max_call_minutes reached', { hangUp: true, noted: true }));
  }

  /**
   * Runs `then` once the carrier has played everything sent (every mark echoed), or after the
   * audio's own length and a margin should the marks never come back.
   */
  private async whenPlayed(then: () => Promise<void>): Promise<void> {
    if (!this.agentSpeaking()) return then();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => { this.afterPlayed = null; resolve(); }, 30_000);
      this.afterPlayed = () => { clearTimeout(timer); resolve(); };
    });
    return then();
  }

  private async ourNumber(): Promise<string> {
    const number = this.session ? await findPhoneNumberById(this.deps.sql, this.session.phoneNumberId) : null;
    return number?.phone_number ?? '';
  }

  /** The end of the call, once: the reason in the transcript, the carrier's line hung up if it is still up, the recording kept, the conversation ended. */
  async end(reason: string, opts: { hangUp: boolean; noted?: boolean }): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.stt?.abort();
    if (this.ws.readyState === this.ws.OPEN) this.ws.close(1000, 'call ended');
    if (!this.started) return;
    if (!opts.noted) await addSystemMessage(this.deps.sql, this.conversation.id, `Call ended: ${reason}`);
    if (opts.hangUp) await this.deps.carrier.hangUp(this.binding.callSid).catch((err: unknown) => this.deps.log.warn({ err }, 'could not hang up a streamed call'));
    if (this.mixer) {
      await saveCallRecording(this.deps.sql, { orgId: this.binding.orgId, agentId: this.agent.id, conversationId: this.conversation.id, samples: this.mixer.mix() });
    }
    if (this.session) await endSession(this.deps.sql, this.session.id);
    await endConversation(this.deps, this.conversation.id, 'visitor');
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify(message));
  }
}
