import Router from '@koa/router';
// The signature check alone, not the SDK's index (its REST client: about 16 MiB of an idle process; issue 48).
import { validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import { AppError, notFound, validationError } from '../../src/errors.ts';
import { relayCarrierStatus } from '../../src/campaigns/index.ts';
import { answerCampaignCall, answerMachine, assertCampaignCallRequest } from '../../src/campaigns/calls.ts';
import {
  answerSms, answerVoice, answerWarmDestination, recordCallStatus, recordTransferVoicemail, transferNotAnswered, type CarrierParams, type InboundDeps,
} from '../../src/telephony/inbound.ts';
import { hangupResponse } from '../../src/telephony/twiml.ts';
import { storeCarrierRecording } from '../../src/voice/carrier-recordings.ts';
import { CARRIER_WEBHOOK_PATHS, webhookSigningToken } from '../../src/telephony/webhook-urls.ts';
import type { AppContext } from '../context.ts';
import { formBodyErrors, readFormBytes } from '../middleware/body.ts';
import { createRateLimiter } from '../middleware/rate-limit.ts';
import { ROUTER_OPTIONS } from '../routing.ts';
import { publicOrigin } from '../public-origin.ts';

const UUID = /^[0-9a-f-]{36}$/i;

/** Carrier webhook bodies are a few hundred bytes of form fields. */
const MAX_FORM_BYTES = 64 * 1024;

/** The URL the carrier requested, as it signed it, and the origin of the callbacks our TwiML names: PUBLIC_BASE_URL (see publicOrigin). */
const baseUrlOf = (ctx: AppContext): string => publicOrigin(ctx);

/**
 * Every carrier request must carry a valid `X-Twilio-Signature` (HMAC-SHA1 of the URL and the
 * sorted form fields with the signing token: TWILIO_AUTH_TOKEN, or the sandbox's own token when the
 * sandbox carrier runs without one): otherwise 403 and nothing is recorded. Then its fields must
 * be text PostgreSQL can hold, as a JSON body's must (issue 40, D20): percent-encoded UTF-8 without
 * U+0000, else 400 `validation_error` naming the field, and nothing is recorded.
 */
async function verifiedParams(ctx: AppContext, throttle: (ctx: AppContext) => void): Promise<CarrierParams> {
  throttle(ctx);
  const type = ctx.get('Content-Type').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') throw new AppError(415, 'unsupported_media_type', 'carrier webhooks are form-encoded (application/x-www-form-urlencoded)');
  const bytes = await readFormBytes(ctx, MAX_FORM_BYTES);
  // Decoded as the carrier signed it (leniently); the strict check comes after the signature (403 before 400).
  const params: CarrierParams = Object.fromEntries(new URLSearchParams(bytes.toString('utf8')));
  const token = webhookSigningToken(ctx.deps.config, ctx.deps.secrets);
  const signature = ctx.get('X-Twilio-Signature');
  if (!token || !signature || !validateRequest(token, signature, baseUrlOf(ctx) + ctx.originalUrl, params)) {
    throw new AppError(403, 'carrier_signature_invalid', 'X-Twilio-Signature is missing or does not match this request');
  }
  const errors = formBodyErrors(bytes);
  if (errors.length) throw validationError(errors);
  return params;
}

/**
 * The carrier webhooks count per client address (CARRIER_WEBHOOK_RATE_LIMIT_PER_MINUTE), before
 * any body is read or signature checked: a flood of forged requests gets 429, with the RateLimit
 * fields on every answer, as the public endpoints do.
 */
function carrierRateLimit(limit: number): (ctx: AppContext) => void {
  const limiter = createRateLimiter(limit);
  return (ctx) => {
    const rate = limiter.take(`ip:${ctx.ip}`);
    ctx.set('RateLimit-Policy', `"carrier";q=${rate.limit};w=60`);
    ctx.set('RateLimit', `"carrier";r=${rate.remaining};t=${rate.resetSeconds}`);
    if (!rate.allowed) {
      throw new AppError(429, 'rate_limited', `rate limit of ${rate.limit} carrier webhook requests a minute from one address exceeded`, {
        headers: { 'Retry-After': String(rate.resetSeconds) },
      });
    }
  };
}

function twiml(ctx: AppContext, xml: string): void {
  ctx.status = 200;
  ctx.type = 'text/xml; charset=utf-8';
  ctx.body = xml;
}

const inboundDeps = (ctx: AppContext): InboundDeps => ctx.deps;

/** The `?name=` of the request's URL, when given once. */
const queryParam = (ctx: AppContext, name: string): string | undefined => {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * The carrier's webhooks (Twilio's wire format, which the sandbox shares): inbound calls, their
 * status callbacks, warm transfer destinations and inbound texts. Not part of the REST route
 * table: the carrier authenticates with its signature, not a bearer token, and speaks TwiML.
 */
export function carrierWebhooksRouter(limitPerMinute: number): Router {
  const router = new Router(ROUTER_OPTIONS);
  const throttle = carrierRateLimit(limitPerMinute);
  router.post(CARRIER_WEBHOOK_PATHS.voice, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c, throttle);
    // An answered outbound campaign call (its URL names it): the agent's side of it.
    const campaignCall = queryParam(c, 'campaign_call') ?? '';
    if (UUID.test(campaignCall)) twiml(c, await answerCampaignCall(inboundDeps(c), campaignCall, params, baseUrlOf(c)));
    else twiml(c, await answerVoice(inboundDeps(c), params, baseUrlOf(c), queryParam(c, 'turn')));
  });
  router.post(`${CARRIER_WEBHOOK_PATHS.voice}/warm`, async (ctx) => {
    const c = ctx as unknown as AppContext;
    await verifiedParams(c, throttle);
    twiml(c, await answerWarmDestination(inboundDeps(c), queryParam(c, 'session') ?? ''));
  });
  // A transfer's outcome (issue 43): the `<Dial action>` of a cold or SIP transfer (DialCallStatus), and the
  // `<Record action>` of the voicemail left when nobody answered.
  router.post(CARRIER_WEBHOOK_PATHS.voiceTransfer, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c, throttle);
    const sessionId = queryParam(c, 'session') ?? '';
    if (queryParam(c, 'voicemail') === '1') return twiml(c, await recordTransferVoicemail(inboundDeps(c), sessionId, params));
    const fallback = await transferNotAnswered(inboundDeps(c), {
      sessionId, how: params.DialCallStatus ?? '', turn: queryParam(c, 'turn') ?? '', baseUrl: baseUrlOf(c), params,
    });
    twiml(c, fallback?.twiml ?? hangupResponse());
  });
  router.post(CARRIER_WEBHOOK_PATHS.voiceStatus, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c, throttle);
    // A warm transfer's destination leg: not answered, the waiting caller gets the rule's on_no_answer.
    const transfer = queryParam(c, 'transfer');
    if (transfer !== undefined) {
      const fallback = await transferNotAnswered(inboundDeps(c), {
        sessionId: transfer, how: params.CallStatus ?? '', turn: queryParam(c, 'turn') ?? '', baseUrl: baseUrlOf(c), params,
      });
      if (fallback?.played) await c.deps.carrier.playOnCall(fallback.callSid, fallback.twiml);
      ctx.status = 204;
      return;
    }
    // An outbound campaign call: its status drives the call's workflow.
    const campaignCall = queryParam(c, 'campaign_call') ?? '';
    if (UUID.test(campaignCall)) {
      await assertCampaignCallRequest(c.deps.sql, campaignCall, params);
      await relayCarrierStatus(c.deps, campaignCall, params.CallStatus ?? '');
    } else await recordCallStatus(inboundDeps(c), params);
    ctx.status = 204;
  });
  // A turn-by-turn call's recording is ready (phone_settings.record_calls, issue 44): downloaded into the blob store.
  router.post(CARRIER_WEBHOOK_PATHS.voiceRecording, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c, throttle);
    await storeCarrierRecording(c.deps, queryParam(c, 'conversation') ?? '', params);
    ctx.status = 204;
  });
  // Answering-machine detection's result for a campaign call: a machine gets the voicemail behaviour.
  router.post(CARRIER_WEBHOOK_PATHS.voiceAmd, async (ctx) => {
    const c = ctx as unknown as AppContext;
    const params = await verifiedParams(c, throttle);
    const campaignCall = queryParam(c, 'campaign_call') ?? '';
    if (!UUID.test(campaignCall)) throw notFound('campaign call');
    await assertCampaignCallRequest(c.deps.sql, campaignCall, params);
    await answerMachine({ ...inboundDeps(c) }, campaignCall, params.AnsweredBy ?? '');
    ctx.status = 204;
  });
  router.post(CARRIER_WEBHOOK_PATHS.sms, async (ctx) => {
    const c = ctx as unknown as AppContext;
    twiml(c, await answerSms(inboundDeps(c), await verifiedParams(c, throttle)));
  });
  return router;
}
