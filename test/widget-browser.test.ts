import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { EMBED_SCRIPT_PATH } from '../api/routes/embed.ts';
import { CHROMIUM, launchChromium, MISSING_CHROMIUM } from './browser.ts';
import { call, client, startTestService, type TestService } from './helpers.ts';

const SCREENSHOT = join(process.cwd(), '.data', 'screenshots', 'widget.png');

let svc: TestService;
let browser: Browser;
let pages: Server;
let pagesUrl: string;
let api: ReturnType<typeof client>;

/** Test pages on their own origin (127.0.0.1, the service answers on localhost), each embedding the snippet. */
function pageHtml(path: string, agent: string): string {
  const lang = path === '/fr' ? 'fr' : 'en';
  const snippet = `<script src="${svc.url}/embed.js" data-agent="${agent}" async></script>`;
  const inline = path === '/inline' ? '<div id="slot" data-agent-container style="width:380px;height:520px"></div>' : '';
  // Hostile page styles: none of them may reach the widget, and the widget's may not reach the page.
  return `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><title>Shop</title><style>
    * { font-family: serif; color: rgb(200, 0, 0); }
    button { background: rgb(0, 128, 0) !important; border-radius: 0 !important; }
    </style></head><body><h1>Acme shop</h1><p>Everything for your garden.</p>
    <button class="launcher" id="own">The page's own button</button>${inline}${snippet}</body></html>`;
}

beforeAll(async () => {
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true });
  api = client(svc.url, (await svc.newOrg()).token);
  pages = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://pages');
    const agent = url.searchParams.get('agent') ?? '';
    if (!['/en', '/fr', '/inline'].includes(url.pathname)) { res.writeHead(404).end(); return; }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(pageHtml(url.pathname, agent));
  });
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagesUrl = `http://127.0.0.1:${(pages.address() as { port: number }).port}`;
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => (pages ? pages.close(resolve) : resolve(undefined)));
  await svc?.stop();
});

interface TestAgent { id: string; public_key: string }

/** An agent made and configured through the REST API, as its owner would. */
async function newAgent(patch: Record<string, unknown>): Promise<TestAgent> {
  const made = await api.post('/api/v1/rest/agents', { name: 'Acme help' });
  expect(made.status, made.text).toBe(201);
  const changed = await api.patch(`/api/v1/rest/agents/${made.body.id}`, patch);
  expect(changed.status, changed.text).toBe(200);
  return changed.body;
}

const conversationsOf = (agent: TestAgent) =>
  svc.sql<{ id: string; visitor_id: string | null; language: string | null; page_url: string | null }[]>`
    select id, visitor_id, language, page_url from conversations where agent_id = ${agent.id} order by started_at`;

interface Visit { context: BrowserContext; page: Page; warnings: string[]; starts: string[] }

/** Opens a test page in a fresh browser context (its own storage), recording console warnings and conversation starts. */
async function visit(path: string, agent: TestAgent, context?: BrowserContext): Promise<Visit> {
  context ??= await browser.newContext({ viewport: { width: 1024, height: 720 } });
  const page = await context.newPage();
  const warnings: string[] = [];
  const starts: string[] = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/conversations')) starts.push(r.url()); });
  const config = page.waitForResponse((r) => r.url().endsWith(`/widgets/${agent.public_key}/config`));
  await page.goto(`${pagesUrl}${path}?agent=${agent.public_key}`);
  await config;
  return { context, page, warnings, starts };
}

const widget = (page: Page) => page.locator('ams-chat-widget');
const messages = (page: Page, role: string) => widget(page).locator(`.msg.${role}`);

const BASE_LOOK = {
  theme: { mode: 'light', primary: '#0F766E', radius: 14 },
  intro_title: 'Welcome to Acme', intro_subtitle: 'We answer in minutes',
  suggested_prompts: ['What are your opening hours?', 'Do you deliver?'],
  localized_copy: { fr: { intro_title: 'Bienvenue chez Acme', intro_subtitle: 'Nous répondons en quelques minutes', suggested_prompts: ['Quels sont vos horaires ?'] } },
  button_label: 'Ask us', show_label: true,
};

describe('GET /embed.js', () => {
  it('serves the widget with caching, a strong ETag and cross-origin headers', async () => {
    const res = await call(svc.url, 'GET', '/embed.js');
    expect(res.status).toBe(200);
    expect(res.text).toBe(await readFile(EMBED_SCRIPT_PATH, 'utf8'));
    expect(res.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const again = await call(svc.url, 'GET', '/embed.js', { headers: { 'If-None-Match': `"other", ${etag}` } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe('public, max-age=300');
    expect((await call(svc.url, 'GET', '/embed.js', { headers: { 'If-None-Match': '"stale"' } })).status).toBe(200);
  });
});

// Without a browser the run fails, by name: these tests are never skipped.
it('finds Chromium', () => {
  expect(existsSync(CHROMIUM), MISSING_CHROMIUM).toBe(true);
});

describe('embed.js in Chromium', () => {
  beforeAll(async () => {
    browser = await launchChromium();
  });

  it('renders the launcher and panel with the theme, position and copy, sealed from the page styles', async () => {
    const agent = await newAgent({ ...BASE_LOOK, position: 'bottom_left', domains: ['127.0.0.1'] });
    const { page, context, starts } = await visit('/en', agent);
    const launcher = widget(page).locator('.launcher');
    await launcher.waitFor();
    const look = await launcher.evaluate((node) => {
      const s = getComputedStyle(node);
      return { background: s.backgroundColor, radius: s.borderRadius, font: s.fontFamily, position: s.position };
    });
    expect(look).toMatchObject({ background: 'rgb(15, 118, 110)', radius: '28px', position: 'fixed' });
    expect(look.font).not.toBe('serif');
    const box = (await launcher.boundingBox())!;
    expect(box.x).toBeLessThan(100); // bottom_left
    expect(box.y + box.height).toBeGreaterThan(680);
    await expect.poll(() => launcher.getAttribute('aria-label')).toBe('Ask us');
    expect(await launcher.innerText()).toContain('Ask us');
    // The widget's styles stay inside: the page's own button.launcher keeps the page's look.
    expect(await page.locator('#own').evaluate((n) => getComputedStyle(n).backgroundColor)).toBe('rgb(0, 128, 0)');

    const panel = widget(page).locator('.panel');
    expect(await panel.isVisible()).toBe(false);
    await launcher.click();
    await panel.waitFor();
    expect(await launcher.getAttribute('aria-expanded')).toBe('true');
    expect(await panel.evaluate((n) => getComputedStyle(n).borderRadius)).toBe('14px');
    expect(await widget(page).locator('h2').textContent()).toBe('Welcome to Acme');
    expect(await widget(page).locator('.sub').textContent()).toBe('We answer in minutes');
    expect(await widget(page).locator('.prompts button').allTextContents()).toEqual(BASE_LOOK.suggested_prompts);
    expect(await widget(page).locator('header').evaluate((n) => getComputedStyle(n).backgroundColor)).toBe('rgb(15, 118, 110)');
    // Opening starts the conversation: the agent's greeting comes first.
    await expect.poll(() => messages(page, 'agent').count(), { timeout: 15_000 }).toBe(1);
    expect(starts).toHaveLength(1);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.tagName)).toBe('AMS-CHAT-WIDGET');
    expect(await widget(page).locator('textarea').evaluate((n) => n === (n.getRootNode() as ShadowRoot).activeElement)).toBe(true);

    // Escape closes and gives focus back to the launcher.
    await page.keyboard.press('Escape');
    await expect.poll(() => panel.isVisible()).toBe(false);
    expect(await launcher.evaluate((n) => n === (n.getRootNode() as ShadowRoot).activeElement)).toBe(true);
    await context.close();
  });

  it('a suggested prompt sends; the typing indicator shows while waiting; the reply arrives; text is never markup', async () => {
    const agent = await newAgent(BASE_LOOK);
    const { page, context } = await visit('/en', agent);
    // Hold the visitor's messages for a moment, so the indicator is seen whatever the runtime's speed.
    await page.route('**/messages', async (route) => {
      if (route.request().method() === 'POST') await new Promise((r) => setTimeout(r, 1200));
      await route.continue();
    });
    await widget(page).locator('.launcher').click();
    await expect.poll(() => messages(page, 'agent').count(), { timeout: 15_000 }).toBe(1);
    const typing = widget(page).locator('.typing');
    expect(await typing.isVisible()).toBe(false);

    await widget(page).getByRole('button', { name: 'Do you deliver?' }).click();
    await typing.waitFor({ state: 'visible', timeout: 1000 });
    expect(await messages(page, 'visitor').allTextContents()).toEqual(['Do you deliver?']);
    await typing.waitFor({ state: 'hidden', timeout: 20_000 });
    await expect.poll(() => messages(page, 'agent').count()).toBeGreaterThanOrEqual(2);
    const reply = (await messages(page, 'agent').last().textContent())!;
    expect(reply.trim()).not.toBe('');
    expect(await widget(page).locator('.prompts').isVisible()).toBe(false);

    // Typed text with markup, sent with Enter, shows as text and runs nothing.
    const hostile = '<img src=x onerror="window.__pwned=1"><b>bold?</b>';
    await widget(page).locator('textarea').fill(hostile);
    await widget(page).locator('textarea').press('Enter');
    await expect.poll(() => messages(page, 'visitor').count()).toBe(2);
    await typing.waitFor({ state: 'hidden', timeout: 20_000 });
    expect(await messages(page, 'visitor').last().textContent()).toBe(hostile);
    expect(await widget(page).locator('.log img, .log b').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    const [conversation, ...others] = await conversationsOf(agent);
    expect(others).toEqual([]);
    expect(conversation!.page_url).toBe(`${pagesUrl}/en?agent=${agent.public_key}`);
    const transcript = await svc.sql<{ role: string; text: string }[]>`
      select role, text from conversation_messages where conversation_id = ${conversation!.id} and role = 'visitor' order by ts, id`;
    expect(transcript.map((m) => m.text)).toEqual(['Do you deliver?', hostile]);

    await mkdir(join(SCREENSHOT, '..'), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    const png = await readFile(SCREENSHOT);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect((await stat(SCREENSHOT)).size).toBeGreaterThan(10_000);
    await context.close();
  });

  it('a thumbs up under a reply, and the end-of-chat survey where the agent asks for it, are stored as feedback (issue 45)', async () => {
    const agent = await newAgent({ ...BASE_LOOK, satisfaction_survey: true });
    const { page, context } = await visit('/en', agent);
    await widget(page).locator('.launcher').click();
    await expect.poll(() => messages(page, 'agent').count(), { timeout: 15_000 }).toBe(1);
    const [conversation] = await conversationsOf(agent);
    const feedbackOf = () => svc.sql<{ kind: string; rating: number | null; thumbs: string | null; comment: string | null }[]>`
      select kind, rating, thumbs, comment from feedback where conversation_id = ${conversation!.id} order by created_at`;

    await widget(page).getByRole('button', { name: 'Helpful', exact: true }).first().click();
    await expect.poll(async () => (await feedbackOf()).map((f) => f.thumbs), { timeout: 15_000 }).toEqual(['up']);
    expect(await widget(page).getByRole('button', { name: 'Helpful', exact: true }).first().getAttribute('aria-pressed')).toBe('true');

    await widget(page).getByRole('button', { name: 'End conversation' }).click();
    const send = widget(page).getByRole('button', { name: 'Send rating' });
    await send.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await send.isDisabled()).toBe(true);
    await widget(page).getByRole('button', { name: '4 out of 5' }).click();
    await widget(page).getByRole('textbox', { name: 'Anything to add? (optional)' }).fill('Quick and kind');
    await send.click();
    await widget(page).getByText('Thank you for your feedback.').waitFor({ timeout: 15_000 });
    expect((await feedbackOf()).map((f) => [f.kind, f.rating, f.thumbs, f.comment])).toEqual([['thumbs', null, 'up', null], ['rating', 4, null, 'Quick and kind']]);
    await context.close();
  });

  it('keeps the visitor id across reloads, resumes the conversation, and shows an advisor\'s reply by polling', async () => {
    const agent = await newAgent(BASE_LOOK);
    const first = await visit('/en', agent);
    const { page } = first;
    await widget(page).locator('.launcher').click();
    await widget(page).getByRole('button', { name: 'What are your opening hours?' }).click();
    await expect.poll(() => messages(page, 'agent').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    await widget(page).locator('.typing').waitFor({ state: 'hidden' });
    const visitorId = await page.evaluate((key) => JSON.parse(localStorage.getItem(`ams:visitor:${key}`) ?? 'null'), agent.public_key);
    const [conversation] = await conversationsOf(agent);
    expect(visitorId).toBeTruthy();
    expect(conversation!.visitor_id).toBe(visitorId);
    const shown = await widget(page).locator('.msg').allTextContents();

    // A reload resumes this tab's conversation (panel open, transcript back), starting nothing new.
    await page.reload();
    await widget(page).locator('.panel').waitFor();
    await expect.poll(() => widget(page).locator('.msg').allTextContents()).toEqual(shown);
    expect(await conversationsOf(agent)).toHaveLength(1);

    // A person answers from the dashboard: the open widget picks it up within a poll or two.
    await svc.sql`insert into conversation_messages (id, conversation_id, role, text, ts)
      values (${randomUUID()}, ${conversation!.id}, 'human_agent', 'Hello, this is Sam from the shop.', now())`;
    await expect.poll(() => messages(page, 'human_agent').textContent(), { timeout: 15_000 }).toContain('Hello, this is Sam from the shop.');

    // Another tab of the same browser: a new conversation, by the same visitor.
    const second = await visit('/en', agent, first.context);
    await widget(second.page).locator('.launcher').click();
    await expect.poll(() => conversationsOf(agent).then((c) => c.length), { timeout: 15_000 }).toBe(2);
    expect((await conversationsOf(agent)).map((c) => c.visitor_id)).toEqual([visitorId, visitorId]);
    await first.context.close();
  });

  it('shows the French copy on a French page and starts the conversation in French', async () => {
    const agent = await newAgent(BASE_LOOK);
    const { page, context } = await visit('/fr', agent);
    const launcher = widget(page).locator('.launcher');
    await launcher.waitFor();
    expect((await launcher.boundingBox())!.x).toBeGreaterThan(800); // bottom_right, the default
    await launcher.click();
    expect(await widget(page).locator('h2').textContent()).toBe('Bienvenue chez Acme');
    expect(await widget(page).locator('.sub').textContent()).toBe('Nous répondons en quelques minutes');
    expect(await widget(page).locator('.prompts button').allTextContents()).toEqual(['Quels sont vos horaires ?']);
    expect(await widget(page).locator('textarea').getAttribute('placeholder')).toBe('Écrivez un message…');
    await expect.poll(() => conversationsOf(agent).then((c) => c[0]?.language), { timeout: 15_000 }).toBe('fr');
    await context.close();
  });

  it('inline mode renders in the page\'s container and starts a conversation only when the visitor writes', async () => {
    const agent = await newAgent({ ...BASE_LOOK, display_mode: 'inline', theme: { mode: 'dark' } });
    const { page, context } = await visit('/inline', agent);
    const panel = widget(page).locator('.panel');
    await panel.waitFor();
    expect(await page.locator('#slot > ams-chat-widget').count()).toBe(1);
    expect(await widget(page).locator('.launcher').count()).toBe(0);
    const look = await panel.evaluate((n) => ({ position: getComputedStyle(n).position, background: getComputedStyle(n).backgroundColor }));
    expect(look).toEqual({ position: 'static', background: 'rgb(17, 24, 39)' }); // dark mode
    const box = (await panel.boundingBox())!;
    expect(box.width).toBeCloseTo(380, 0);
    expect(await conversationsOf(agent)).toEqual([]);

    await widget(page).locator('textarea').fill('Hello there');
    await widget(page).locator('textarea').press('Enter');
    await expect.poll(() => messages(page, 'agent').count(), { timeout: 20_000 }).toBeGreaterThanOrEqual(2);
    const [conversation] = await conversationsOf(agent);

    // Ending it: the service records the end, and the next message starts a new conversation.
    await widget(page).getByRole('button', { name: 'End conversation' }).click();
    await expect.poll(() => widget(page).locator('.note').textContent()).toBe('The conversation has ended.');
    await expect.poll(async () => (await svc.sql`select status from conversations where id = ${conversation!.id}`)[0]?.status).toBe('ended');
    await widget(page).locator('textarea').fill('One more thing');
    await widget(page).locator('textarea').press('Enter');
    await expect.poll(() => conversationsOf(agent).then((c) => c.length), { timeout: 15_000 }).toBe(2);
    await context.close();
  });

  it('fullscreen mode covers the viewport; launcher icons follow launcher_icon_kind; the header shows the logo', async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const logo = 'https://cdn.acme.example/logo.png';
    const icon = 'https://cdn.acme.example/icon.png';
    const full = await newAgent({ ...BASE_LOOK, display_mode: 'fullscreen', logo_url: logo });
    const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
    // These machines reach no outside host: the browser gets the images from here.
    await context.route('https://cdn.acme.example/**', (route) => route.fulfill({ contentType: 'image/png', body: png }));
    const { page } = await visit('/en', full, context);
    const panel = widget(page).locator('.panel');
    await panel.waitFor();
    expect(await panel.boundingBox()).toEqual({ x: 0, y: 0, width: 1024, height: 720 });
    expect(await widget(page).locator('.launcher').count()).toBe(0);
    expect(await widget(page).locator('.panel button[aria-label="Close chat"]').count()).toBe(0);
    expect(await widget(page).locator('header img').getAttribute('src')).toBe(logo);

    const kinds = { default: null, logo, custom: icon } as const;
    for (const [kind, src] of Object.entries(kinds)) {
      const agent = await newAgent({ launcher_icon_kind: kind, logo_url: logo, launcher_icon_url: icon, button_label: 'Help', show_label: false });
      const { page } = await visit('/en', agent, context);
      const launcher = widget(page).locator('.launcher');
      await launcher.waitFor();
      expect(await launcher.getAttribute('aria-label')).toBe('Help');
      expect(await launcher.innerText()).toBe(''); // show_label false: the label is only for assistive technology
      if (src) {
        await expect.poll(() => launcher.locator('img').evaluate((n: HTMLImageElement) => n.complete && n.naturalWidth > 0)).toBe(true);
        expect(await launcher.locator('img').getAttribute('src')).toBe(src);
      } else {
        expect(await launcher.locator('img').count()).toBe(0);
        expect(await launcher.locator('svg.ico').count()).toBe(1);
      }
    }
    await context.close();
  });

  it('a paused agent: the widget loads, says it is not taking conversations, and starts none', async () => {
    const agent = await newAgent({ ...BASE_LOOK, status: 'paused' });
    const { page, context, starts } = await visit('/en', agent);
    await widget(page).locator('.launcher').click();
    const notice = widget(page).locator('.notice');
    await notice.waitFor();
    expect(await notice.textContent()).toContain('not taking conversations');
    expect(await widget(page).locator('textarea').isDisabled()).toBe(true);
    expect(await widget(page).locator('.prompts').isVisible()).toBe(false);
    await page.waitForTimeout(500);
    expect(starts).toEqual([]);
    expect(await conversationsOf(agent)).toEqual([]);
    await context.close();
  });

  it('a page whose origin is not in the agent\'s domains: nothing renders, a console warning, no conversation', async () => {
    const agent = await newAgent({ ...BASE_LOOK, domains: ['shop.example'] });
    const { page, context, warnings, starts } = await visit('/en', agent);
    await expect.poll(() => warnings.join('\n')).toContain('not in the agent\'s domains');
    expect(await widget(page).count()).toBe(0);
    expect(starts).toEqual([]);
    expect(await conversationsOf(agent)).toEqual([]);
    await context.close();
  });
});
