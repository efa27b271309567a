import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startTestService, type TestService } from './helpers.ts';
import { keyWith, newAgent, newOrg } from './support/orgs.ts';

const SCREENSHOT = join(process.cwd(), '.data', 'screenshots', 'inbox-takeover.png');

let svc: TestService;
let browser: Browser;
let pages: Server;
let pagesUrl: string;

beforeAll(async () => {
  svc = await startTestService({ LIVE_STREAM_HEARTBEAT_SECONDS: 2 });
  // The visitor's site, on its own origin, embedding the widget.
  pages = createServer((req, res) => {
    const agent = new URL(req.url ?? '/', 'http://pages').searchParams.get('agent') ?? '';
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      .end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Shop</title></head><body><h1>Acme shop</h1>
        <script src="${svc.url}/embed.js" data-agent="${agent}" async></script></body></html>`);
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as { port: number }).port}`;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await svc?.stop();
});

const widget = (page: Page) => page.locator('ams-chat-widget');

describe('the /inbox operator page in Chromium', () => {
  it('follows the live list over SSE; a member takes over, replies, tags and hands back while the visitor chats in the widget', async () => {
    const { api } = await newOrg(svc);
    const agent = await newAgent(api, 'Acme help');
    // live_chat_alerts (issue 43): the visitor asking for a person alerts the page (badge, tone).
    expect((await api.patch(`/api/v1/rest/agents/${agent.id}`, { live_chat_alerts: true })).status).toBe(200);
    const member = await keyWith(svc, api, ['conversations.read', 'conversations.write'], { user_email: 'grace@example.com' });

    // The operator connects first: what follows reaches the page over the live stream.
    const operatorContext = await browser.newContext({ viewport: { width: 1100, height: 720 } });
    // Counts the tones the page starts through the Web Audio API.
    await operatorContext.addInitScript(() => {
      const w = window as unknown as { tones: number };
      w.tones = 0;
      const create = AudioContext.prototype.createOscillator;
      AudioContext.prototype.createOscillator = function (this: AudioContext) { w.tones += 1; return create.call(this); };
    });
    const operator = await operatorContext.newPage();
    const tones = () => operator.evaluate(() => (window as unknown as { tones: number }).tones);
    const failures: string[] = [];
    operator.on('pageerror', (e) => failures.push(e.message));
    operator.on('console', (m) => { if (m.type() === 'error') failures.push(m.text()); });
    await operator.goto(`${svc.url}/inbox`);
    await operator.locator('#token').fill(member.token);
    await operator.locator('#connect button').click();
    await expect.poll(() => operator.locator('#status').textContent(), { timeout: 15_000 }).toBe('Live');

    // The visitor, in a browser context of their own, asks for a person.
    const visitor = await (await browser.newContext({ viewport: { width: 1024, height: 720 } })).newPage();
    await visitor.goto(`${pagesUrl}/?agent=${agent.public_key}`);
    await widget(visitor).locator('.launcher').click();
    await expect.poll(() => widget(visitor).locator('.msg.agent').count(), { timeout: 15_000 }).toBe(1);
    await widget(visitor).locator('textarea').fill('Can I talk to a human?');
    await widget(visitor).locator('textarea').press('Enter');
    await expect.poll(() => widget(visitor).locator('.msg.agent').count(), { timeout: 15_000 }).toBe(2);

    const row = operator.locator('#list li');
    await row.first().waitFor({ timeout: 15_000 });
    await expect.poll(() => row.first().locator('.badge.needs').count(), { timeout: 15_000 }).toBe(1);
    await expect.poll(() => operator.locator('#alerts').textContent(), { timeout: 15_000 }).toBe('1 alert');
    expect(await row.first().locator('.badge.alert').count()).toBe(1);
    expect(await operator.title()).toBe('(1) Live inbox');
    expect(await tones()).toBe(2);
    // Opening the conversation answers the alert.
    await row.first().click();
    await expect.poll(() => operator.locator('#alerts').isHidden(), { timeout: 15_000 }).toBe(true);
    await operator.locator('#log .msg.visitor').first().waitFor();
    await operator.locator('#take').click();
    await expect.poll(() => operator.locator('#mode').textContent(), { timeout: 15_000 }).toBe('You are answering');

    // The visitor's widget shows the member joining (it polls every few seconds).
    await widget(visitor).locator('.msg.system', { hasText: 'grace joined the conversation' }).waitFor({ timeout: 20_000 });
    await operator.locator('#text').fill('Hi, Grace here. How can I help?');
    await operator.locator('#reply button').click();
    const human = widget(visitor).locator('.msg.human_agent', { hasText: 'Hi, Grace here. How can I help?' });
    await human.waitFor({ timeout: 20_000 });
    expect(await human.locator('.who').textContent()).toBe('Advisor');

    // The visitor answers; the agent stays silent and the operator sees it live.
    const agentReplies = await widget(visitor).locator('.msg.agent').count();
    await widget(visitor).locator('textarea').fill('I was double charged on my last invoice');
    await widget(visitor).locator('textarea').press('Enter');
    await operator.locator('#log .msg.visitor', { hasText: 'double charged' }).waitFor({ timeout: 15_000 });
    await operator.locator('#tag').fill('Billing');
    await operator.locator('#tagger button').click();
    await operator.locator('#tags .tag', { hasText: 'billing' }).waitFor();
    // Open, so read: no unread badge on it.
    await expect.poll(() => row.first().locator('.badge.unread').count(), { timeout: 15_000 }).toBe(0);
    expect(await row.first().locator('.badge.human').count()).toBe(1);
    await mkdir(join(process.cwd(), '.data', 'screenshots'), { recursive: true });
    await operator.screenshot({ path: SCREENSHOT, fullPage: true });
    await visitor.screenshot({ path: SCREENSHOT.replace('.png', '-visitor.png') });
    expect(await widget(visitor).locator('.msg.agent').count()).toBe(agentReplies);

    // Hand back: the agent answers the visitor again.
    await operator.locator('#back').click();
    await expect.poll(() => operator.locator('#mode').textContent(), { timeout: 15_000 }).toBe('Agent answering');
    await widget(visitor).locator('textarea').fill('What are your opening hours?');
    await widget(visitor).locator('textarea').press('Enter');
    await expect.poll(() => widget(visitor).locator('.msg.agent').count(), { timeout: 15_000 }).toBeGreaterThan(agentReplies);
    expect((await api.get(`/api/v1/rest/conversations?tag=billing`)).body.total).toBe(1);
    // The visitor wrote to the open conversation while the member held it: no new alert on the page.
    expect(await operator.locator('#alerts').isHidden()).toBe(true);
    expect(await tones()).toBe(2);
    expect(failures).toEqual([]);
  }, 120_000);

  it('says how to get a user token, acts on no conversation before one is selected, and clears an error that no longer applies (issue 42)', async () => {
    const { api } = await newOrg(svc);
    await newAgent(api, 'Acme help');
    const member = await keyWith(svc, api, ['conversations.read', 'conversations.write'], { user_email: 'ada@example.com' });
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 720 } })).newPage();
    const advisorCalls: string[] = [];
    page.on('request', (request) => { if (request.url().includes('/advisor')) advisorCalls.push(`${request.method()} ${request.url()}`); });
    await page.goto(`${svc.url}/inbox`);

    // How to get a ut_ token, with this service's own address.
    await page.locator('#token-help summary').click();
    const help = await page.locator('#token-help').textContent();
    expect(help).toContain(`${new URL(svc.url).origin}/api/v1/rest/api-keys`);
    expect(help).toContain('"user_email"');
    expect(help).toContain('conversations.write');

    // Nothing selected: the actions are disabled, and even a click sent to them requests nothing.
    for (const id of ['#take', '#back', '#text', '#tag']) expect(await page.locator(id).isDisabled()).toBe(true);
    expect(await page.locator('#pick').isVisible()).toBe(true);
    await page.locator('#take').dispatchEvent('click');
    await page.locator('#back').dispatchEvent('click');

    // A wrong token says so; the right one then clears that error.
    await page.locator('#token').fill('ut_not_a_real_token');
    await page.locator('#connect button').click();
    await page.locator('#error').waitFor({ state: 'visible', timeout: 15_000 });
    expect(await page.locator('#error').textContent()).toMatch(/unknown or revoked/);
    expect(await page.locator('#status').textContent()).toBe('Not connected');
    await page.locator('#token').fill(member.token);
    await page.locator('#connect button').click();
    await expect.poll(() => page.locator('#status').textContent(), { timeout: 15_000 }).toBe('Live');
    expect(await page.locator('#error').isHidden()).toBe(true);

    // Connected, still nothing selected: still nothing to act on.
    expect(await page.locator('#take').isDisabled()).toBe(true);
    await page.locator('#take').dispatchEvent('click');
    await page.locator('#back').dispatchEvent('click');
    expect(await page.locator('#error').isHidden()).toBe(true);
    expect(advisorCalls).toEqual([]);
  }, 60_000);
});
