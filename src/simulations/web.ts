import { existsSync } from 'node:fs';
import { CancelledFailure, Context } from '@temporalio/activity';
import type { Browser, LaunchOptions, Page, Response } from 'playwright-core';
import { findAgent } from '../db/agents.ts';
import { findConversationRecord } from '../db/conversations.ts';
import { adoptWebConversation, findSimulation, setSimulationTurnCount, storeBlockedRequests, storeScreenshot } from '../db/simulations.ts';
import { outboundPolicy } from '../net/outbound.ts';
import { startBrowserGuard, type BrowserGuard } from './browser-guard.ts';
import { SIMULATION_HEADER, simulationToken } from './web-marker.ts';
import { endConversation } from '../conversations/lifecycle.ts';
import { createScriptedCaller } from '../runtime/caller.ts';
import type { SimulationDeps } from './runs.ts';
import { closeSimulation } from './turns.ts';
import { readAfterCommit } from '../db/commit-gate.ts';
import { workflowIds } from '../temporal/ids.ts';

/**
 * A web simulation as its activity runs it: Debian's headless Chromium (through playwright-core,
 * loaded only here) opens the page, the embed snippet is injected when the page lacks it, and the
 * scripted caller types into the real widget, reading the agent's replies from its DOM. The
 * conversation the widget started is flagged simulated, ended (its lifecycle evaluates it), and a
 * screenshot of the finished chat is kept with the run. Everything the browser fetches passes the
 * outbound policy (`browser-guard.ts`); what it refused is kept with the run as `blocked_requests`.
 * A failed run's `error` stays generic (no net::ERR_* text, no upstream status): it must not tell
 * an open port from a closed one. The detail goes to the logs.
 */

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const REPLY_TIMEOUT_MS = 30_000;

export const chromiumPath = () => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

async function launch(guard: Pick<LaunchOptions, 'proxy' | 'args'>): Promise<Browser> {
  const path = chromiumPath();
  if (!existsSync(path)) throw new Error(`no Chromium at ${path} (install Debian's chromium, or set CHROMIUM_PATH)`);
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: path, args: [...CHROMIUM_ARGS, ...(guard.args ?? [])], ...(guard.proxy ? { proxy: guard.proxy } : {}) });
}

/** What a failed run says: nothing a port scan could read (the detail is logged). */
function unopenedMessage(guard: BrowserGuard): string {
  return guard.blocked().length
    ? 'the page could not be opened; blocked_requests lists what the browser was not allowed to reach'
    : 'the page could not be opened';
}

/** Waits until the widget shows more than `before` agent messages and is no longer typing; answers the new ones. */
async function newAgentMessages(page: Page, before: number): Promise<string[]> {
  const widget = page.locator('ams-chat-widget');
  const agentMessages = widget.locator('.msg.agent');
  const deadline = Date.now() + REPLY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if ((await agentMessages.count()) > before && !(await widget.locator('.typing').isVisible())) break;
    await page.waitForTimeout(100);
  }
  return (await agentMessages.allTextContents()).slice(before);
}

export async function runWebSimulation(deps: SimulationDeps, input: { simulationId: string; embedBaseUrl: string }): Promise<{ status: 'completed' | 'failed' }> {
  // Started inside the run's creating transaction: the commit gate waits for it (a run rolled back is no run).
  const sim = await readAfterCommit(deps.sql, workflowIds.webSimulation(input.simulationId), (tx) => findSimulation(tx, null, input.simulationId));
  if (!sim) return { status: 'failed' };
  const agent = await findAgent(deps.sql, sim.orgId, sim.agentId);
  let guard: BrowserGuard | undefined;
  const fail = async (error: string) => {
    if (Context.current().cancellationSignal.aborted) throw new CancelledFailure('the web simulation was cancelled');
    if (guard) await storeBlockedRequests(deps.sql, sim.id, guard.blocked());
    await closeSimulation(deps, { simulationId: sim.id, status: 'failed', endedReason: 'error', error });
    return { status: 'failed' as const };
  };
  if (!agent) return fail('the agent no longer exists');
  let browser: Browser | undefined;
  let conversationId: string | null = null;
  // Cancellation reaches an activity only in a heartbeat's answer (its activity beats while the browser runs,
  // `heartbeating`): the browser is closed when it arrives, which makes the page's pending step throw (issue 43).
  const context = Context.current();
  const onCancel = () => { void browser?.close().catch(() => undefined); };
  context.cancellationSignal.addEventListener('abort', onCancel);
  const canceled = () => context.cancellationSignal.aborted;
  try {
    guard = await startBrowserGuard({
      policy: outboundPolicy(deps.config), serviceOrigin: new URL(input.embedBaseUrl).origin,
      // The conversation the widget starts is simulated from its first event (conversation.started).
      serviceHeaders: { [SIMULATION_HEADER]: simulationToken(deps.secrets, sim.id, agent.public_key) },
      onError: (origin, err) => deps.log.debug({ simulation_id: sim.id, origin, err: err.message }, 'web simulation: a request failed'),
    });
    browser = await launch(guard.launchOptions);
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, serviceWorkers: 'block', acceptDownloads: false });
    await guard.attach(context);
    const page = await context.newPage();
    page.on('response', (res: Response) => {
      if (res.request().method() === 'POST' && /\/public\/widgets\/[^/]+\/conversations$/.test(new URL(res.url()).pathname)) {
        res.json().then((body: { conversation_id?: string }) => { conversationId ??= body.conversation_id ?? null; }, () => undefined);
      }
    });
    let opened;
    try {
      opened = await page.goto(sim.pageUrl!, { waitUntil: 'load', timeout: 30_000 });
    } catch (err) {
      deps.log.info({ simulation_id: sim.id, err: (err as Error).message.split('\n')[0] }, 'web simulation: the page could not be opened');
      return await fail(unopenedMessage(guard));
    }
    if (opened && opened.status() >= 400) {
      deps.log.info({ simulation_id: sim.id, status: opened.status() }, 'web simulation: the page answered an error status');
      return await fail(unopenedMessage(guard));
    }
    const hasSnippet = await page.locator(`script[data-agent="${agent.public_key}"]`).count() > 0;
    if (!hasSnippet) {
      await page.evaluate(({ src, key }) => {
        const script = document.createElement('script');
        script.src = src;
        script.dataset.agent = key;
        script.async = true;
        document.body.appendChild(script);
      }, { src: `${input.embedBaseUrl}/embed.js`, key: agent.public_key });
    }
    const widget = page.locator('ams-chat-widget');
    await widget.locator('.launcher, textarea').first().waitFor({ timeout: 30_000 });
    if (await widget.locator('.launcher').count()) await widget.locator('.launcher').click();
    const textarea = widget.locator('textarea');
    await textarea.waitFor({ timeout: 30_000 });
    // The conversation starts when the chat opens: type once its greeting is shown, or the first turn is lost.
    await widget.locator('.msg.agent').first().waitFor({ timeout: 30_000 });
    await widget.locator('.typing').waitFor({ state: 'hidden', timeout: 30_000 });
    const caller = createScriptedCaller({ goal: sim.scenarioText, maxTurns: sim.maxTurns });
    let lastReply = '';
    let turn = 0;
    let goalMet = false;
    for (let t = 1; t <= sim.maxTurns; t++) {
      const text = t === 1 ? caller.opening() : caller.reply(lastReply, t);
      if (text === null) break;
      const before = await widget.locator('.msg.agent').count();
      await textarea.fill(text);
      await textarea.press('Enter');
      lastReply = (await newAgentMessages(page, before)).join('\n');
      turn = t;
      Context.current().heartbeat({ turn });
      if (caller.goalMet?.()) { goalMet = true; break; }
    }
    await setSimulationTurnCount(deps.sql, sim.id, turn);
    const png = await page.screenshot();
    await storeScreenshot(deps.sql, sim.id, png);
    await storeBlockedRequests(deps.sql, sim.id, guard.blocked());
    if (!conversationId || !(await findConversationRecord(deps.sql, conversationId, { agentId: agent.id }))) {
      return await fail('the widget did not start a conversation');
    }
    await deps.sql.begin((tx) => adoptWebConversation(tx, sim.id, agent.id, conversationId!));
    await closeSimulation(deps, { simulationId: sim.id, status: 'completed', endedReason: goalMet ? 'goal_met' : 'max_turns' });
    // Ended as the visitor ends it: its lifecycle workflow evaluates it.
    await endConversation(deps, conversationId, 'visitor');
    return { status: 'completed' };
  } catch (err) {
    // Cancelled: nothing is recorded here; the workflow records `canceled` once this activity has ended.
    if (canceled()) throw new CancelledFailure('the web simulation was cancelled');
    deps.log.warn({ err, simulation_id: sim.id }, 'web simulation failed');
    return fail((err as Error).name === 'TimeoutError' ? 'the browser run failed: the widget did not load or answer in time' : 'the browser run failed');
  } finally {
    context.cancellationSignal.removeEventListener('abort', onCancel);
    await browser?.close().catch(() => undefined);
    await guard?.close().catch(() => undefined);
  }
}
