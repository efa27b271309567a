import Router from '@koa/router';
import getRawBody from 'raw-body';
import twilio from 'twilio';
import { AppError } from '../../src/errors.ts';
import { relayCarrierStatus } from '../../src/campaigns/index.ts';
import { answerCampaignCall } from '../../src/campaigns/calls.ts';
import { answerSms, answerVoice, answerWarmDestination, recordCallStatus, type CarrierParams, type InboundDeps } from '../../src/telephony/inbound.ts';
import { CARRIER_WEBHOOK_PATHS, webhookSigningToken } from '../../src/telephony/webhook-urls.ts';
import type { AppContext } from '../context.ts';
import { ROUTER_OPTIONS } from '../routing.ts';
import { publicOrigin } from '../public-origin.ts';

const UUID = /^[0-9a-f-]{36}$/i;

/** Carrier webhook bodies are a few hundred bytes of form fields. */
const MAX_FORM_BYTES = 64 * 1024;

/** The URL the carrier requested, as it signed it, and the origin of the callbacks our TwiML names: PUBLIC_BASE_URL (see publicOrigin). */
const baseUrlOf = (ctx: AppContext): string => publicOrigin(ctx);

async function readForm(ctx: AppContext): Promise<CarrierParams> {
  const type = ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new AppError(415, 'unsupported_media_type', 'carrier webhooks are form-encoded (application/x-www-form-urlencoded)');
  let text: string;
  try {
    text = (await getRawBody(ctx.req, { limit: MAX_FORM_BYTES, encoding: 'utf8' })).toString();
  } catch {
    throw new AppError(413, 'payload_too_large', `a carrier webhook body is at most ${MAX_FORM_BYTES} bytes`);
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/**
 * Every carrier request must carry a valid `X-Twilio-Signature` (HMAC-SHA1 of the URL and the
 * sorted form fields with the signing token: TWILIO_AUTH_TOKEN, or the sandbox's own token when the
 * sandbox carrier runs without one): otherwise 403 and nothing is recorded.
 */
async function verifiedParams(ctx: AppContext): Promise<CarrierParams> {
  const params = await readForm(ctx);
  const token = webhookSigningToken(ctx.deps.config);
  const signature = ctx.get('X-Twilio-Signature');
  if (!token || !signature || !twilio.validateRequest(token, signature, baseUrlOf(ctx) + ctx.originalUrl, params)) {
    throw new AppError(403, 'carrier_signature_invalid', 'X-Twilio-Signature is missing or does not match this request');
  }
  return params;
}

function twiml(ctx: AppContext, xml: string): void {
  ctx.status = 200;
  ctx.type = 'text/xml; charset=utf-8';
  ctx.body = xml;
}

const inboundDeps = (ctx: AppContext): InboundDeps => ctx.deps;

/**
 * The carrier's webhooks (Twilio's wire format, which the sandbox shares): inbound calls, their
 * status callbacks, warm transfer destinations and inbound texts. Not part of the REST route
 * table: the carrier authenticates with its signature, not a bearer token, and speaks TwiML.
 */
export function carrierWebhooksRouter(): Router {
  const router = new Router(ROUTER_OPTIONS);
  router.post(CARRIER_WEBHOOK_PATHS.voice, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c);
    // An answered outbound campaign call (its URL names it): the agent's side of it.
    const campaignCall = String(c.query.campaign_call ?? '');
    if (UUID.test(campaignCall)) twiml(c, await answerCampaignCall(inboundDeps(c), campaignCall, params, baseUrlOf(c)));
    else twiml(c, await answerVoice(inboundDeps(c), params, baseUrlOf(c)));
  });
  router.post(`${CARRIER_WEBHOOK_PATHS.voice}/warm`, async (ctx) => {
    const c = ctx as unknown as AppContext;
    await verifiedParams(c);
    twiml(c, await answerWarmDestination(inboundDeps(c), String(c.query.session ?? '')));
  });
  router.post(CARRIER_WEBHOOK_PATHS.voiceStatus, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c);
    // An outbound campaign call: its status drives the call's workflow.
    const campaignCall = String(c.query.campaign_call ?? '');
    if (UUID.test(campaignCall)) await relayCarrierStatus(c.deps, campaignCall, params.CallStatus ?? '');
    else await recordCallStatus(inboundDeps(c), params);
    ctx.status = 204;
  });
  router.post(CARRIER_WEBHOOK_PATHS.sms, async (ctx) => {
    const c = ctx as unknown as AppContext;
    twiml(c, await answerSms(inboundDeps(c), await verifiedParams(c)));
  });
  return router;
}
