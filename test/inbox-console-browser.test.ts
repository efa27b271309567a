import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startTestService, type TestService } from './helpers.ts';
import { newAgent, newOrg } from './support/orgs.ts';
import { assigneeOf, historyOf, newMember, visitorAsking } from './support/members.ts';

const REST = '/api/v1/rest';

let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  svc = await startTestService({ LIVE_STREAM_HEARTBEAT_SECONDS: 2, ASSIGNMENT_ACCEPT_SECONDS: 600, ASSIGNMENT_RECHECK_SECONDS: 600 });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

describe('/inbox as the operators\' console in Chromium (issue 45)', () => {
  it('shows the queue and the assignment notice; the member takes over, replies with a canned response, hands back, closes another and goes away', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Acme help');
    const { member, token } = await newMember(svc, api, { email: 'olga@example.com', name: 'Olga', availability: 'online' });
    expect((await api.post(`${REST}/canned-responses`, { short_code: 'thanks', title: 'Thank you', text: 'Thanks for waiting, {{member.name}} from {{agent.name}} here.' })).status).toBe(201);

    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    await context.addInitScript(() => {
      const w = window as unknown as { tones: number };
      w.tones = 0;
      const create = AudioContext.prototype.createOscillator;
      AudioContext.prototype.createOscillator = function (this: AudioContext) { w.tones += 1; return create.call(this); };
    });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (e) => failures.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') failures.push(m.text()); });
    await page.goto(`${svc.url}/inbox`);
    await page.locator('#token').fill(token);
    await page.locator('#connect button').click();
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('Live');
    await expect.poll(() => page.locator('#me').textContent(), { timeout: 15_000 }).toBe('Olga (operator)');
    expect(await page.locator('#availability').inputValue()).toBe('online');

    // A visitor asks for a person: the conversation is assigned to Olga, who is told (badge and tone).
    const visitor = await visitorAsking(svc, agent);
    await expect.poll(() => page.locator('#alerts').textContent(), { timeout: 15_000 }).toBe('1 alert');
    expect(await page.evaluate(() => (window as unknown as { tones: number }).tones)).toBeGreaterThan(0);
    const queued = page.locator(`#queue li[data-id="${visitor.id}"]`);
    await queued.waitFor({ timeout: 15_000 });
    await expect.poll(() => queued.textContent(), { timeout: 15_000 }).toContain('Assigned to olga@example.com');

    // Search narrows the list; clearing it brings the conversation back.
    await page.locator('#search').fill('no such conversation');
    await expect.poll(() => page.locator('#list li').count()).toBe(0);
    await page.locator('#search').fill('');
    await expect.poll(() => page.locator(`#list li[data-id="${visitor.id}"]`).count()).toBe(1);

    // Take over from the queue.
    expect((await api.post(`${REST}/conversations/${visitor.id}/annotations/notes`, { text: 'VIP customer' })).status).toBe(201);
    await queued.click();
    await page.locator('#log .msg.visitor').first().waitFor({ timeout: 15_000 });
    // Its data and the team's notes beside the transcript.
    await page.locator('#notes li', { hasText: 'VIP customer' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('#assignee').textContent()).toBe('Assigned to olga@example.com');
    await page.locator('#take').click();
    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 15_000 }).toBe('You are answering');
    // Taken over: it leaves the queue.
    await expect.poll(() => page.locator(`#queue li[data-id="${visitor.id}"]`).count(), { timeout: 15_000 }).toBe(0);

    // A canned reply: /th suggests it, Tab expands it, Send sends it.
    await page.locator('#text').fill('/th');
    await page.locator('#canned li[data-code="thanks"]').waitFor({ timeout: 15_000 });
    await page.locator('#text').fill('/thanks');
    await page.locator('#text').press('Tab');
    await expect.poll(() => page.locator('#text').inputValue(), { timeout: 15_000 }).toBe('Thanks for waiting, Olga from Acme help here.');
    await page.locator('#reply button').click();
    await page.locator('#log .msg.human_agent', { hasText: 'Thanks for waiting, Olga from Acme help here.' }).waitFor({ timeout: 15_000 });
    const transcript = (await api.get(`${REST}/conversations/${visitor.id}`)).body.messages as { role: string; text: string }[];
    expect(transcript.filter((m) => m.role === 'human_agent').map((m) => m.text)).toEqual(['Thanks for waiting, Olga from Acme help here.']);

    // Hand back: the agent answers again.
    await page.locator('#back').click();
    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 15_000 }).toBe('Agent answering');
    const before = transcript.filter((m) => m.role === 'agent').length;
    expect((await visitor.say('What are your opening hours?')).body.messages.length).toBeGreaterThan(0);
    const after = (await api.get(`${REST}/conversations/${visitor.id}`)).body.messages.filter((m: { role: string }) => m.role === 'agent').length;
    expect(after).toBeGreaterThan(before);

    // Close: a second visitor's conversation, assigned to Olga, is closed from the console; her slot is free again.
    const second = await visitorAsking(svc, agent);
    const row = page.locator(`#list li[data-id="${second.id}"]`);
    await row.waitFor({ timeout: 15_000 });
    await expect.poll(() => assigneeOf(api, second.id), { timeout: 15_000 }).toBe('olga@example.com');
    await row.click();
    await expect.poll(() => page.locator('#assignee').textContent(), { timeout: 15_000 }).toBe('Assigned to olga@example.com');
    expect(await page.locator('#close').isDisabled()).toBe(false);
    const open = (await api.get(`${REST}/members/${member.id}`)).body.open_conversations as number;
    await page.locator('#close').click();
    await expect.poll(() => page.locator('#mode').textContent(), { timeout: 15_000 }).toBe('Ended');
    expect(await page.locator('#close').isDisabled()).toBe(true);
    await expect.poll(() => page.locator(`#list li[data-id="${second.id}"]`).count(), { timeout: 15_000 }).toBe(0);
    expect((await api.get(`${REST}/conversations/${second.id}`)).body.status).toBe('ended');
    expect((await historyOf(api, second.id)).at(-1)).toMatchObject({ action: 'released', reason: 'closed', member_email: 'olga@example.com', by_member_id: member.id });
    expect((await api.get(`${REST}/members/${member.id}`)).body.open_conversations).toBe(open - 1);

    // Availability from the header.
    await page.locator('#availability').selectOption('away');
    await expect.poll(async () => (await api.get(`${REST}/members/${member.id}`)).body.availability, { timeout: 15_000 }).toBe('away');
    expect(failures).toEqual([]);
  }, 120_000);
});
