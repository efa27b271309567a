import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
// The signature alone, not the SDK's index (its REST client, about 6 MiB of heap at idle: this module loads with the simulations).
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';
import { WebSocket } from 'ws';
import { CARRIER_WEBHOOK_PATHS } from '../telephony/webhook-urls.ts';
import { createEspeak, createPocketsphinx, ttsVoiceOf, type SpeechToText, type TextToSpeech, type TtsVoice } from './engines.ts';
import { decodeMulaw, FRAME_SAMPLES, MULAW_SILENCE, MulawFramer } from './mulaw.ts';

/**
 * The sandbox's streamed caller (issue 44): it places a call to one of our numbers as the carrier
 * would (the signed voice webhook), opens the `<Stream>` the TwiML names and speaks Twilio's Media
 * Streams protocol on it: `connected`, `start`, a `media` frame every 20 ms (its scripted lines,
 * synthesized with espeak-ng, else silence), `mark` echoed once the agent's audio before it has
 * played (in real time), `stop`. It hears `clear` as the carrier does (what is not played yet is
 * dropped) and can transcribe the agent's audio back. Tests, simulations and the bench use it.
 */

export interface StreamedCallOptions {
  /** The service's origin. */
  baseUrl: string;
  /** The key carrier webhooks are signed with (Service.carrierSigningToken). */
  signingToken: string;
  /** The number called (one of ours) and the caller's. */
  to: string;
  from?: string;
  tts?: TextToSpeech;
  stt?: SpeechToText;
  voice?: TtsVoice;
}

/** What the agent said in one reply: its frames, as the caller heard them. */
export interface HeardReply { frames: Buffer[]; firstFrameAt: number }

const FRAME_MS = 20;

/** What the service sends on the stream (Twilio's outbound messages). */
interface ServerMessage { event?: string; media?: { payload?: string }; mark?: { name?: string } }
/** Played silence after the last mark that tells the caller the agent's reply is over (as a person hears it). */
const REPLY_GAP_MS = 400;

export class StreamedCall extends EventEmitter {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  /** Every agent frame received, in order. */
  readonly agentFrames: Buffer[] = [];
  /** When the caller's last speech frame went out (ms, performance clock), for latency figures. */
  lastSpeechSentAt = 0;
  /** When the first frame of the caller's latest line went out (ms, performance clock). */
  speechStartedAt = 0;
  /** The media frame the caller's latest line began with, counted from the stream's first (as the service counts them). */
  speechStartedFrame = 0;
  /** When each frame of the caller's latest line went out (ms, performance clock): where a barge-in was detected, for the bench. */
  lineSentAt: number[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private queue: { frame: Buffer; speech: boolean; first?: boolean; done?: () => void }[] = [];
  private sent = 0;
  private clock = 0;
  private timer: NodeJS.Timeout | null = null;
  private playEnd = 0;
  private pendingMarks = new Set<NodeJS.Timeout>();
  private open = true;

  constructor(private readonly ws: WebSocket, private readonly engines: { tts: TextToSpeech; stt: SpeechToText; voice: TtsVoice }, readonly callSid: string) {
    super();
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => {
      this.open = false;
      this.stopSending();
      resolve({ code, reason: reason.toString() });
    }));
    ws.on('message', (data) => this.onMessage(JSON.parse(data.toString()) as ServerMessage));
  }

  /** Starts the stream as the carrier does: `connected`, `start`, then a frame every 20 ms. */
  start(): void {
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start', sequenceNumber: '1', streamSid: this.streamSid,
      start: {
        accountSid: `AC${'0'.repeat(32)}`, streamSid: this.streamSid, callSid: this.callSid, tracks: ['inbound'],
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, customParameters: {},
      },
    });
    this.clock = performance.now();
    this.tick();
  }

  /** Says `text` after what is already queued; resolves when its last frame has gone out. */
  async say(text: string): Promise<void> {
    await this.sendFrames(await speechFrames(this.engines.tts, this.engines.voice, text));
  }

  /** Queues μ-law frames (speech) and resolves when the last one has gone out. */
  sendFrames(frames: Buffer[]): Promise<void> {
    return new Promise((resolve) => {
      frames.forEach((frame, i) => this.queue.push({ frame, speech: true, first: i === 0, ...(i === frames.length - 1 ? { done: resolve } : {}) }));
      if (!frames.length) resolve();
    });
  }

  /** Sends `seconds` of silence at once, ahead of real time (the call's audio clock runs forward). */
  fastForward(seconds: number): void {
    const silence = Buffer.alloc(FRAME_SAMPLES, MULAW_SILENCE);
    for (let i = 0; i < (seconds * 1000) / FRAME_MS; i++) this.sendMedia(silence);
  }

  /** The agent's next reply: from its first frame after now until its last mark has played and a short silence followed. */
  nextReply(): Promise<HeardReply> {
    const from = this.agentFrames.length;
    return new Promise((resolve) => {
      let gap: NodeJS.Timeout | null = null;
      let firstFrameAt = 0;
      const onMedia = () => {
        if (!firstFrameAt) firstFrameAt = performance.now();
        if (gap) clearTimeout(gap);
        gap = null;
      };
      const onPlayed = () => {
        if (this.pendingMarks.size || this.agentFrames.length === from) return;
        if (gap) clearTimeout(gap);
        gap = setTimeout(finish, REPLY_GAP_MS);
      };
      const finish = () => {
        this.off('media', onMedia);
        this.off('played', onPlayed);
        this.off('clear', onPlayed);
        resolve({ frames: this.agentFrames.slice(from), firstFrameAt });
      };
      this.on('media', onMedia);
      this.on('played', onPlayed);
      this.on('clear', onPlayed);
      this.closed.then(() => { if (this.agentFrames.length > from) finish(); }, () => {});
    });
  }

  /** The first agent frame from now on. */
  nextAudio(): Promise<void> { return new Promise((resolve) => this.once('media', () => resolve())); }

  /** What the agent said in `frames`, by the offline recognizer. */
  transcribe(frames: Buffer[]): Promise<string> { return transcribeFrames(this.engines.stt, frames); }

  /** The caller hangs up: `stop`, then the socket closes. */
  hangUp(): Promise<{ code: number; reason: string }> {
    this.send({ event: 'stop', sequenceNumber: String(this.sent + 2), streamSid: this.streamSid, stop: { accountSid: `AC${'0'.repeat(32)}`, callSid: this.callSid } });
    this.ws.close(1000);
    return this.closed;
  }

  /** The connection is lost: no `stop`, no closing handshake. */
  drop(): void { this.ws.terminate(); }

  private tick(): void {
    if (!this.open) return;
    const item = this.queue.shift();
    this.sendMedia(item?.frame ?? Buffer.alloc(FRAME_SAMPLES, MULAW_SILENCE));
    if (item?.first) {
      this.speechStartedAt = performance.now();
      this.speechStartedFrame = this.sent;
      this.lineSentAt = [];
    }
    if (item?.speech) this.lineSentAt.push(performance.now());
    if (item?.speech) this.lastSpeechSentAt = performance.now();
    item?.done?.();
    // Paced by the clock, not by the timer's drift: frame n leaves at start + 20 n ms.
    this.clock += FRAME_MS;
    this.timer = setTimeout(() => this.tick(), Math.max(0, this.clock - performance.now()));
  }

  private stopSending(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const t of this.pendingMarks) clearTimeout(t);
    this.pendingMarks.clear();
  }

  private sendMedia(frame: Buffer): void {
    this.sent++;
    this.send({
      event: 'media', sequenceNumber: String(this.sent + 1), streamSid: this.streamSid,
      media: { track: 'inbound', chunk: String(this.sent), timestamp: String(this.sent * FRAME_MS), payload: frame.toString('base64') },
    });
  }

  private onMessage(message: ServerMessage): void {
    const now = performance.now();
    if (message.event === 'media') {
      const frame = Buffer.from(String(message.media?.payload ?? ''), 'base64');
      this.agentFrames.push(frame);
      this.playEnd = Math.max(now, this.playEnd) + (frame.length / FRAME_SAMPLES) * FRAME_MS;
      this.emit('media', frame);
    } else if (message.event === 'mark') {
      const name = String(message.mark?.name ?? '');
      const timer = setTimeout(() => {
        this.pendingMarks.delete(timer);
        this.send({ event: 'mark', sequenceNumber: String(this.sent + 1), streamSid: this.streamSid, mark: { name } });
        this.emit('played', name);
      }, Math.max(0, this.playEnd - now));
      this.pendingMarks.add(timer);
    } else if (message.event === 'clear') {
      // The carrier drops what it has not played: no mark of it comes back.
      for (const t of this.pendingMarks) clearTimeout(t);
      this.pendingMarks.clear();
      this.playEnd = now;
      this.emit('clear');
    }
  }

  private send(message: Record<string, unknown>): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }
}

/** The sandbox caller's own engines: espeak-ng speaks its lines, pocketsphinx hears the agent. */
export function sandboxCallerEngines(language: string | null = 'en'): { tts: TextToSpeech; stt: SpeechToText; voice: TtsVoice } {
  return { tts: createEspeak(), stt: createPocketsphinx(), voice: ttsVoiceOf(language, null) };
}

/** `text` spoken by `tts` in `voice`, as the 20 ms μ-law frames of a media stream. */
export async function speechFrames(tts: TextToSpeech, voice: TtsVoice, text: string): Promise<Buffer[]> {
  const framer = new MulawFramer();
  return [...framer.pushSamples(await tts.synthesize(text, voice)), ...framer.flush()];
}

/** What `stt` hears in μ-law `frames`. */
export async function transcribeFrames(stt: SpeechToText, frames: Buffer[]): Promise<string> {
  const stream = stt.open();
  for (const frame of frames) stream.write(decodeMulaw(frame));
  return (await stream.finish()).trim();
}

/** The `<Stream url>` of a TwiML answer, or null. */
export function streamUrlOf(twiml: string): string | null {
  const m = /<Stream url="([^"]+)"/.exec(twiml);
  return m ? m[1]!.replace(/&amp;/g, '&') : null;
}

/** Posts the carrier's signed voice webhook for a new call to `to`; answers the TwiML. */
export async function ringNumber(opts: StreamedCallOptions, callSid: string): Promise<string> {
  const url = opts.baseUrl + CARRIER_WEBHOOK_PATHS.voice;
  const params = { CallSid: callSid, From: opts.from ?? '+14155550142', To: opts.to, AccountSid: `AC${'0'.repeat(32)}`, CallStatus: 'ringing', Direction: 'inbound' };
  const res = await fetch(url, {
    method: 'POST', body: new URLSearchParams(params).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': getExpectedTwilioSignature(opts.signingToken, url, params) },
  });
  return res.text();
}

/** Places a streamed sandbox call to `to` and starts its stream; throws when the number does not answer with a stream. */
export async function placeStreamedCall(opts: StreamedCallOptions): Promise<StreamedCall> {
  const own = sandboxCallerEngines();
  const engines = { tts: opts.tts ?? own.tts, stt: opts.stt ?? own.stt, voice: opts.voice ?? own.voice };
  const callSid = newCallSid();
  const twiml = await ringNumber(opts, callSid);
  const url = streamUrlOf(twiml);
  if (!url) throw new Error(`the number did not answer with a stream: ${twiml}`);
  const ws = await openStream(url);
  const call = new StreamedCall(ws, engines, callSid);
  call.start();
  return call;
}

export const newCallSid = () => `CA${randomBytes(16).toString('hex')}`;

/** Opens a media stream WebSocket; rejects with the HTTP status when the upgrade is refused. */
export function openStream(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => reject(Object.assign(new Error(`stream refused with ${res.statusCode}`), { status: res.statusCode, body })));
    });
    ws.once('error', reject);
  });
}
