import type { AppMiddleware } from '../context.ts';

/**
 * CORS for the public area (the widget endpoints, which pages on other sites call from the
 * browser, and the transcript cards); the app mounts it there and nowhere else. Every
 * response (errors included, so the embed can read their code) allows the calling origin; which
 * origins may actually use an agent is its `domains` list, checked per request by the endpoint.
 * Preflights are answered here.
 */
export function publicCors(): AppMiddleware {
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    ctx.set('Access-Control-Allow-Origin', origin || '*');
    ctx.vary('Origin');
    ctx.set('Access-Control-Expose-Headers', 'X-Request-Id');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, X-Visitor-Token, X-Request-Id');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    await next();
  };
}
