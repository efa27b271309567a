import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.ts';
import { startTestService, type TestService } from './helpers.ts';

// Where the page's picture goes, for a person to look at (DOCS_SCREENSHOT moves it out of the repository).
const SCREENSHOT = process.env.DOCS_SCREENSHOT ?? join(process.cwd(), '.data', 'screenshots', 'docs.png');

let svc: TestService;
let browser: Browser | undefined;

beforeAll(async () => {
  svc = await startTestService({}, { worker: false });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await svc?.stop();
});

it('the /docs reference renders the Agents operations, with no warning box and no console error', async () => {
  const context = await browser!.newContext({ viewport: { width: 1280, height: 1400 } });
  try {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()}`));
    await page.goto(`${svc.url}/docs`);

    // Each operation block's id is operations-<tag>-<operationId>. (A document this large is laid out as
    // Swagger UI's virtual list, where a tag's operations are not inside one tag section.)
    await page.locator('h3[data-tag="Agents"]').waitFor({ timeout: 120_000 });
    const agents = page.locator('[id^="operations-Agents-"]');
    await agents.first().waitFor({ timeout: 120_000 });
    const operations = await agents.locator('.opblock-summary-path').allInnerTexts();
    expect(operations.map((p) => p.replace(/\u200b/g, ''))).toEqual(expect.arrayContaining(['/api/v1/rest/agents', '/api/v1/rest/agents/{id}']));
    expect(await page.locator('.opblock-summary-method').first().innerText()).toMatch(/^(GET|POST|PATCH|PUT|DELETE)$/);

    // Swagger UI's red boxes: parser and resolver errors, and the version pragma (unsupported document features).
    for (const selector of ['.error-wrapper', '.errors-wrapper', '.version-pragma']) {
      expect(await page.locator(selector).count(), selector).toBe(0);
    }
    expect(await page.locator('body').innerText()).not.toMatch(/not supported|unable to render|jsonSchemaDialect/i);
    await mkdir(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    expect(problems).toEqual([]);
  } finally {
    await context.close();
  }
}, 180_000); // Swagger UI renders a large document: slow on a busy machine; a guard against hanging only.
