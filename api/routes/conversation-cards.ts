import { createHmac, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import { ROUTER_OPTIONS } from '../routing.ts';
import type { SecretBox } from '../../src/crypto/secret-box.ts';
import { findConversationCard, type ConversationCard } from '../../src/db/conversations.ts';
import { AppError, notFound } from '../../src/errors.ts';
import { isUuid } from '../../src/ids.ts';
import type { AppContext } from '../context.ts';

/**
 * The transcript card behind a conversation's `card_url`: self-contained HTML for an iframe, at a
 * signed URL that needs no token. The signature is HMAC-SHA256 over `<id>.<expires>` under a key
 * derived from the service's secrets key, so a URL cannot be made or extended by anyone else and
 * a new secrets key voids the old URLs.
 */

export const CARD_PATH = '/api/v1/public/conversation-cards';
/** How long a card URL stays valid. */
export const CARD_TTL_SECONDS = 15 * 60;

const cardKeys = new WeakMap<SecretBox, Buffer>();
/** A key of its own for cards: the box's MAC is never used directly, so its other uses cannot mint one. */
function cardKey(secrets: SecretBox): Buffer {
  let key = cardKeys.get(secrets);
  if (!key) {
    key = secrets.mac('conversation-card-key:v1');
    cardKeys.set(secrets, key);
  }
  return key;
}

/** The signature of a card URL (base64url). */
export function cardSignature(secrets: SecretBox, id: string, expires: number): string {
  return createHmac('sha256', cardKey(secrets)).update(`${id}.${expires}`).digest('base64url');
}

/** A card URL for conversation `id` under `base` (scheme and host), valid CARD_TTL_SECONDS from `now`. */
export function cardUrl(base: string, secrets: SecretBox, id: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + CARD_TTL_SECONDS;
  return `${base.replace(/\/+$/, '')}${CARD_PATH}/${id}?expires=${expires}&sig=${cardSignature(secrets, id, expires)}`;
}

function signatureValid(secrets: SecretBox, id: string, expires: unknown, sig: unknown): boolean {
  if (typeof expires !== 'string' || typeof sig !== 'string' || !/^\d{1,12}$/.test(expires) || !/^[A-Za-z0-9_-]{43}$/.test(sig)) return false;
  if (Number(expires) < Date.now() / 1000) return false;
  const expected = Buffer.from(cardSignature(secrets, id, Number(expires)), 'base64url');
  const given = Buffer.from(sig, 'base64url');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Inline styles only: the page's policy allows no other source of anything. */
const CARD_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors *";

export function conversationCardsRouter(): Router {
  const router = new Router(ROUTER_OPTIONS);
  router.get(`${CARD_PATH}/:id`, async (context) => {
    const ctx = context as unknown as AppContext;
    const id = context.params.id!;
    const { expires, sig } = ctx.query;
    // Checked before any read: an unsigned request learns nothing, not even whether the id exists.
    if (!isUuid(id) || !signatureValid(ctx.deps.secrets, id.toLowerCase(), expires, sig)) {
      throw new AppError(403, 'invalid_signature', 'this card link is invalid or has expired; ask for the conversation again for a new one');
    }
    const card = await findConversationCard(ctx.deps.sql, id);
    if (!card) throw notFound('conversation');
    ctx.set('Content-Security-Policy', CARD_CSP);
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderCard(card);
  });
  return router;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const ROLE_LABELS: Record<string, string> = { visitor: 'Visitor', caller: 'Caller', agent: 'Agent', human_agent: 'Team member', system: 'System' };

/** `2026-03-01 14:05 UTC`: the server formats dates, the card runs no script. */
const utc = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

const STYLE = `
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
.card{max-width:720px;margin:0 auto;padding:16px}
header{border-bottom:1px solid #d0d7de;padding-bottom:8px;margin-bottom:12px}
h1{font-size:16px;margin:0 0 2px}
.meta{margin:0;color:#57606a;font-size:12px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;background:#fff8c5;color:#7d4e00;font-size:11px}
ol{list-style:none;margin:0;padding:0;display:flex;flex-direction:column;gap:8px}
li{max-width:85%;padding:8px 10px;border-radius:10px;background:#fff;border:1px solid #d0d7de}
li p{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.who{display:block;font-size:11px;font-weight:600;color:#57606a;margin-bottom:2px}
.who time{font-weight:400;margin-left:6px}
.visitor,.caller{align-self:flex-end;background:#ddf4ff;border-color:#b6e3ff}
.human_agent{background:#dafbe1;border-color:#aceebb}
.system{align-self:center;background:transparent;border:none;color:#57606a;font-style:italic;font-size:12px}
.empty{color:#57606a;font-style:italic}
`;

/** The card's page: escaped text, inline CSS, no script, no outside resource. */
export function renderCard(card: ConversationCard): string {
  const messages = card.messages.map((m) => {
    const role = ROLE_LABELS[m.role] ? m.role : 'system';
    return `<li class="${role}"><span class="who">${escapeHtml(role === 'agent' ? card.agentName : ROLE_LABELS[role]!)}`
      + `<time datetime="${m.ts}">${m.ts.slice(11, 16)}</time></span><p>${escapeHtml(m.text)}</p></li>`;
  }).join('');
  const meta = [`<time datetime="${card.startedAt.toISOString()}">${utc(card.startedAt)}</time>`, escapeHtml(card.surface)];
  if (card.isSimulated) meta.push('<span class="badge">simulation</span>');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">`
    + `<meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">`
    + `<title>Conversation with ${escapeHtml(card.agentName)}</title><style>${STYLE}</style></head>`
    + `<body><article class="card"><header><h1>${escapeHtml(card.agentName)}</h1><p class="meta">${meta.join(' · ')}</p></header>`
    + (messages ? `<ol>${messages}</ol>` : '<p class="empty">No messages.</p>')
    + `</article></body></html>`;
}
