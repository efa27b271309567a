#!/usr/bin/env node
// Makes sure the browser tests' Chromium exists: Debian's `chromium` package at /usr/bin/chromium
// (or CHROMIUM_PATH), driven by playwright-core. Never a browser that a test tool downloads.
// The one install step of `npm test` (scripts/run.mjs) and CI (.ci/run). Plain Node, no
// dependencies. Progress goes to stderr; exits 1 when Chromium is still missing afterwards.
//
//   node scripts/ensure-chromium.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

const note = (line) => process.stderr.write(`[chromium] ${line}\n`);

function hasCommand(name) {
  return spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
}

// Another apt-get (a first boot's upgrades, or the voice engines' install from another command) holds dpkg's lock for
// a while: wait for it rather than fail (apt 1.9.11 and later; older ones ignore the option).
function aptGet(args) {
  const result = spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return result.status === 0;
}

/** True when Chromium is there, installing Debian's package first when it is not and we can. */
export function ensureChromium() {
  if (existsSync(CHROMIUM_PATH)) return true;
  if (process.env.CHROMIUM_PATH) {
    note(`CHROMIUM_PATH=${CHROMIUM_PATH} does not exist`);
    return false;
  }
  const manual = 'install it with `sudo apt-get install -y chromium` (Debian/Ubuntu), or set CHROMIUM_PATH';
  if (!hasCommand('apt-get')) {
    note(`${CHROMIUM_PATH} is missing and this system has no apt-get: ${manual}`);
    return false;
  }
  if (userInfo().uid !== 0) {
    note(`${CHROMIUM_PATH} is missing and installing it needs root: ${manual}`);
    return false;
  }
  note('installing Debian\'s chromium for the browser tests (apt-get, once; about a minute)');
  if (!aptGet(['update', '-qq']) || !aptGet(['install', '-y', '-qq', 'chromium'])) {
    note('apt-get could not install chromium');
    return false;
  }
  const ok = existsSync(CHROMIUM_PATH);
  note(ok ? `installed ${CHROMIUM_PATH}` : `apt-get finished but ${CHROMIUM_PATH} is still missing`);
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = ensureChromium() ? 0 : 1;
}
