import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's chromium, driven by playwright-core: nothing is downloaded (scripts/ensure-chromium.mjs
 * installs it for npm test and CI). The flags keep it off the (closed) network; playwright gives
 * every launch a fresh profile (--user-data-dir).
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

export const MISSING_CHROMIUM = `Chromium not found at ${CHROMIUM}: the browser tests need Debian's chromium `
  + '(npm test installs it with apt-get when run as root; else apt-get install -y chromium), or CHROMIUM_PATH naming another build';

/** Launches the browser, failing by name when it is missing: browser tests are never skipped. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(MISSING_CHROMIUM);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
