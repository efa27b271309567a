import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { assertOutboundUrl, createOutboundAgent, OutboundTargetError, resolveOutboundHost } from '../src/net/outbound.ts';
import type { AppError } from '../src/errors.ts';

let receiver: Receiver;
beforeAll(async () => { receiver = await startReceiver(); });
afterAll(async () => { await receiver?.close(); });

describe('outbound requests to user-given URLs', () => {
  it('refuses at connect time, after its own lookup, any private address (no DNS rebinding window)', async () => {
    const url = receiver.url();
    const agent = createOutboundAgent({ allowPrivate: false });
    try {
      for (const target of [url, url.replace('127.0.0.1', 'localhost')]) {
        const err = await request(target, { method: 'POST', body: '{}', dispatcher: agent }).then(() => null, (e: unknown) => e);
        expect(err, target).toBeInstanceOf(OutboundTargetError);
        expect((err as OutboundTargetError).code).toBe('private_network_target');
      }
      expect(receiver.received(url)).toHaveLength(0);
    } finally {
      await agent.close();
    }
  });

  it('reaches private addresses when they are allowed, keeping the Host header', async () => {
    const url = receiver.url({ status: 204 });
    const agent = createOutboundAgent({ allowPrivate: true });
    try {
      const res = await request(url.replace('127.0.0.1', 'localhost'), { method: 'POST', body: '{}', dispatcher: agent });
      expect(res.statusCode).toBe(204);
      await res.body.dump();
      expect(receiver.received(url)[0]!.headers.host).toMatch(/^localhost:\d+$/);
    } finally {
      await agent.close();
    }
  });

  it('resolves names and checks every address', async () => {
    await expect(resolveOutboundHost('localhost', { allowPrivate: false })).rejects.toMatchObject({ code: 'private_network_target' });
    expect((await resolveOutboundHost('localhost', { allowPrivate: true })).length).toBeGreaterThan(0);
    await expect(resolveOutboundHost('no-such-host.invalid', { allowPrivate: false })).rejects.toMatchObject({ code: 'unresolvable_host' });
    expect(await resolveOutboundHost('93.184.215.14', { allowPrivate: false })).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  it('maps refusals to the API\'s 400s', async () => {
    const policy = { allowPrivate: false };
    const codeOf = (url: string) => assertOutboundUrl(url, 'url', policy).then(() => null, (e: AppError) => [e.status, e.code, e.errors?.[0]?.code]);
    expect(await codeOf('https://localhost/x')).toEqual([400, 'private_network_target', undefined]);
    expect(await codeOf('http://93.184.215.14/x')).toEqual([400, 'validation_error', 'https_required']);
    expect(await codeOf('https://no-such-host.invalid/x')).toEqual([400, 'validation_error', 'unresolvable_host']);
    expect(await codeOf('https://93.184.215.14/x')).toBeNull();
  });
});
