#!/usr/bin/env node
// Makes sure the offline speech engines of streamed calls (issue 44) exist: Debian's `espeak-ng`
// (text-to-speech) and `pocketsphinx` with its `pocketsphinx-en-us` model (speech-to-text). Installed
// with apt-get once (then found on PATH and skipped). Called by `npm start`, `npm test`, the voice
// bench (scripts/run.mjs) and CI (.ci/run). Plain Node, no dependencies. Progress goes to stderr;
// exits 1 when an engine is still missing afterwards.
//
//   node scripts/ensure-voice-engines.mjs
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';

const PACKAGES = ['espeak-ng', 'pocketsphinx', 'pocketsphinx-en-us'];
const MODEL = '/usr/share/pocketsphinx/model/en-us/en-us';

const note = (line) => process.stderr.write(`[voice] ${line}\n`);
const hasCommand = (name) => spawnSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' }).status === 0;
const present = () => hasCommand(process.env.ESPEAK_NG_PATH || 'espeak-ng') && hasCommand(process.env.POCKETSPHINX_PATH || 'pocketsphinx_continuous') && existsSync(MODEL);

// Wait for dpkg's lock another apt-get holds (a first boot's upgrades, Chromium's install from another command).
function aptGet(args) {
  return spawnSync('apt-get', ['-o', 'DPkg::Lock::Timeout=300', ...args], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
}

/** True when the engines are there, installing Debian's packages first when they are not and we can. */
export function ensureVoiceEngines() {
  if (present()) return true;
  const manual = `install them with \`sudo apt-get install -y ${PACKAGES.join(' ')}\` (Debian/Ubuntu)`;
  if (!hasCommand('apt-get') || userInfo().uid !== 0) {
    note(`the offline speech engines are missing and cannot be installed here: ${manual}`);
    return false;
  }
  note(`installing ${PACKAGES.join(', ')} for streamed calls (apt-get, once)`);
  if (!aptGet(['install', '-y', '-qq', ...PACKAGES]) && !(aptGet(['update', '-qq']) && aptGet(['install', '-y', '-qq', ...PACKAGES]))) {
    note('apt-get could not install the speech engines');
    return false;
  }
  const ok = present();
  note(ok ? 'speech engines installed' : 'apt-get finished but an engine is still missing');
  return ok;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.exitCode = ensureVoiceEngines() ? 0 : 1;
}
