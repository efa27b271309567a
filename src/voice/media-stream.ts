import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { CARRIER_WEBHOOK_PATHS } from '../telephony/webhook-urls.ts';
import { CallStream, type VoiceDeps } from './call-stream.ts';
import { redeemStreamToken } from './stream-tokens.ts';

/**
 * The media stream endpoint: `GET <voiceStream>/<token>` upgraded to a WebSocket speaking Twilio's
 * Media Streams protocol. The token (see stream-tokens.ts) is spent at the upgrade; a missing,
 * forged, expired or spent one is refused with 401 and a problem body, before any WebSocket exists.
 */

/** A streamed call's frames are 20 ms of μ-law (about 300 bytes as JSON): nothing larger is taken. */
const MAX_MESSAGE_BYTES = 64 * 1024;

function refuse(socket: Duplex, status: number, code: string, detail: string): void {
  const body = JSON.stringify({ type: `https://docs.agents.dev/errors/${code}`, title: 'Stream refused', status, code, detail });
  socket.end(`HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : 'Internal Server Error'}\r\n`
    + `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

/** Serves streamed calls on `server`'s upgrades; `close` ends the calls under way (as lost streams). */
export function attachMediaStreams(server: Server, deps: Omit<VoiceDeps, 'baseUrl'> & { baseUrl: (req: IncomingMessage) => string }): { close(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const prefix = `${CARRIER_WEBHOOK_PATHS.voiceStream}/`;
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (!path.startsWith(prefix)) return refuse(socket, 404, 'not_found', 'no WebSocket endpoint here');
    redeemStreamToken(deps.sql, deps.secrets, path.slice(prefix.length)).then((binding) => {
      if (!binding) return refuse(socket, 401, 'stream_token_invalid', 'the stream token is missing, invalid, expired or already used');
      wss.handleUpgrade(req, socket, head, (ws) => { new CallStream({ ...deps, baseUrl: deps.baseUrl(req) }, ws, binding); });
    }).catch((err: unknown) => {
      deps.log.error({ err }, 'media stream upgrade failed');
      refuse(socket, 500, 'internal_error', 'the stream could not be opened');
    });
  });
  return {
    close: () => new Promise<void>((resolve) => {
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => resolve());
    }),
  };
}
