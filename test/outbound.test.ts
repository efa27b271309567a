import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { startReceiver, type Receiver } from './webhook-receiver.ts';
import { assertOutboundUrl, createOutboundAgent, OutboundTargetError, outboundPolicy, resolveOutboundHost } from '../src/net/outbound.ts';
import { loadConfig } from '../src/config.ts';
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

  it('OUTBOUND_ALLOWED_HOSTS lets a named host or an address range through, and only those', async () => {
    const policy = outboundPolicy({ ALLOW_PRIVATE_NETWORK_TARGETS: false, OUTBOUND_ALLOWED_HOSTS: 'localhost, 10.9.0.0/16' });
    expect((await resolveOutboundHost('localhost', policy)).length).toBeGreaterThan(0);
    expect(await resolveOutboundHost('10.9.3.4', policy)).toEqual([{ address: '10.9.3.4', family: 4 }]);
    await expect(resolveOutboundHost('127.0.0.1', policy)).rejects.toMatchObject({ code: 'private_network_target' });
    await expect(resolveOutboundHost('10.8.0.1', policy)).rejects.toMatchObject({ code: 'private_network_target' });
    await expect(assertOutboundUrl('https://10.9.0.1/hook', 'url', policy)).resolves.toBeUndefined();
    await expect(assertOutboundUrl('https://10.8.0.1/hook', 'url', policy)).rejects.toMatchObject({ code: 'private_network_target' });
    expect(() => loadConfig({ OUTBOUND_ALLOWED_HOSTS: '10.0.0.0/40' })).toThrow(/OUTBOUND_ALLOWED_HOSTS/);
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
