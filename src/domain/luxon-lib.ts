import { createRequire } from 'node:module';
import type * as Luxon from 'luxon';

const require = createRequire(import.meta.url);
let luxon: typeof Luxon | undefined;

/**
 * luxon, loaded on first use through its CommonJS build (the package's `require` export, built from the same
 * sources of the same release as its ES module): only calling windows and reports read time zones, and an idle
 * service loaded its 0.5 MB module at start (issue 48, bench/README.md), as phone-lib.ts does for libphonenumber-js.
 * Every user of luxon takes it from here, so one build is loaded.
 */
export const luxonLib = (): typeof Luxon => luxon ??= require('luxon') as typeof Luxon;
