import { Readable } from 'node:stream';
import { compileShapeCheck } from '../src/validation.ts';
import type { RouteDef } from './routing.ts';

/**
 * Holds a route's replies to its declaration (test mode, see SHAPE_CHECKS): the status must be one
 * of `responses`, its body must match that response's schema, and a response declared without a
 * schema has no body. A mismatch throws, so the test that made the request sees a 500.
 */
export function responseCheck(def: RouteDef): (reply: { status: number; body?: unknown }) => void {
  const checks = new Map<number, ((value: unknown) => string[] | null) | null>();
  const opaque = new Set<number>();
  for (const [status, response] of Object.entries(def.responses)) {
    checks.set(Number(status), response.schema && !response.mediaType ? compileShapeCheck(response.schema) : null);
    if (response.mediaType) opaque.add(Number(status));
  }
  return (reply) => {
    // A body that is not JSON (an image, an event stream written to the socket): its status is held.
    if (opaque.has(reply.status)) return;
    // A binary body (an image) is its bytes, a streamed one (a CSV export) its stream: only its status is held to the declaration.
    if (Buffer.isBuffer(reply.body) || reply.body instanceof Readable) {
      if (!checks.get(reply.status)) throw drift(`${def.method} ${def.path} (${def.operationId}) answered ${reply.status} with bytes it does not declare`);
      return;
    }
    // What the client receives: the JSON text of the body (dates as strings, undefined members gone).
    const body = reply.body === undefined ? undefined : JSON.parse(JSON.stringify(reply.body)) as unknown;
    const where = `${def.method} ${def.path} (${def.operationId}) answered ${reply.status}`;
    if (!checks.has(reply.status)) throw drift(`${where}, a status its route does not declare`);
    const check = checks.get(reply.status);
    if (!check) {
      if (body !== undefined) throw drift(`${where} with a body, but declares none`);
      return;
    }
    const errors = check(body);
    if (errors) throw drift(`${where} with a body off its schema:\n  ${errors.join('\n  ')}\n  body: ${JSON.stringify(body).slice(0, 2000)}`);
  };
}

function drift(message: string): Error {
  // Also on stderr: tests keep the service's log silent, and the 500 alone would not say why.
  process.stderr.write(`response drift: ${message}\n`);
  return new Error(`response drift: ${message}`);
}
