import { WebSocket } from 'ws';
import { outboundPolicy, resolveOutboundHost, type OutboundPolicy } from '../net/outbound.ts';
import type { SpeechToText, SttStream } from './engines.ts';
import { SAMPLE_RATE } from './mulaw.ts';

/**
 * Streaming speech-to-text by Deepgram's live protocol (VOICE_STT=deepgram): a WebSocket to
 * `/v1/listen` (16-bit linear PCM at 8 kHz as binary messages, `Authorization: Token <key>`), its
 * `Results` messages with `is_final` pieces of transcript, and `{"type":"CloseStream"}` at the
 * endpoint, after which the last results come and the server closes. The host is resolved and
 * checked by the SSRF guard, and the socket pinned to the checked address.
 */

export interface DeepgramOptions {
  /** `wss://api.deepgram.com/v1/listen`, or a wire-compatible server. */
  url: string;
  apiKey?: string | undefined;
  model: string;
  policy: OutboundPolicy;
}

interface DeepgramMessage { type?: string; is_final?: boolean; channel?: { alternatives?: { transcript?: string }[] } }

export function createDeepgram(opts: DeepgramOptions): SpeechToText {
  return {
    name: 'deepgram',
    open(): SttStream {
      const url = new URL(opts.url);
      url.search = new URLSearchParams({ model: opts.model, encoding: 'linear16', sample_rate: String(SAMPLE_RATE), channels: '1', interim_results: 'false', punctuate: 'true' }).toString();
      const finals: string[] = [];
      const pending: Buffer[] = [];
      let ws: WebSocket | null = null;
      let failed = false;
      const connected = resolveOutboundHost(url.hostname, opts.policy).then(([target]) => new Promise<WebSocket>((resolve, reject) => {
        const socket = new WebSocket(url, {
          headers: opts.apiKey ? { authorization: `Token ${opts.apiKey}` } : {},
          // Pinned to the address the guard checked (the name still goes in Host and SNI).
          lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
            if (options?.all) callback(null, [{ address: target!.address, family: target!.family }]);
            else callback(null, target!.address, target!.family);
          }) as never,
        });
        socket.on('message', (data) => {
          const message = JSON.parse(data.toString()) as DeepgramMessage;
          const text = message.channel?.alternatives?.[0]?.transcript?.trim();
          if (message.type === 'Results' && message.is_final && text) finals.push(text);
        });
        socket.once('open', () => resolve(socket));
        socket.once('error', reject);
      })).then((socket) => {
        ws = socket;
        for (const chunk of pending.splice(0)) socket.send(chunk);
        return socket;
      }, (err: unknown) => {
        failed = true;
        throw err;
      });
      connected.catch(() => {});
      return {
        write(samples) {
          const bytes = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
          if (ws && ws.readyState === WebSocket.OPEN) ws.send(bytes);
          else if (!failed) pending.push(Buffer.from(bytes));
        },
        async finish() {
          const socket = await connected.catch(() => null);
          if (!socket) return '';
          const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
          socket.send(JSON.stringify({ type: 'CloseStream' }));
          await closed;
          return finals.join(' ');
        },
        abort() { void connected.then((socket) => socket.terminate(), () => {}); },
      };
    },
  };
}

/** Deepgram from the settings (VOICE_STT=deepgram). */
export function deepgramFromConfig(config: {
  VOICE_STT_URL: string; VOICE_STT_API_KEY?: string | undefined; VOICE_STT_MODEL: string;
  ALLOW_PRIVATE_NETWORK_TARGETS: boolean; OUTBOUND_ALLOWED_HOSTS?: string | undefined;
}): SpeechToText {
  return createDeepgram({ url: config.VOICE_STT_URL, apiKey: config.VOICE_STT_API_KEY, model: config.VOICE_STT_MODEL, policy: outboundPolicy(config) });
}
