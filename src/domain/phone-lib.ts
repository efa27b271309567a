import { createRequire } from 'node:module';
import type * as PhoneMax from 'libphonenumber-js/max';
import type * as PhoneMin from 'libphonenumber-js/min';

const require = createRequire(import.meta.url);
let min: typeof PhoneMin | undefined;
let max: typeof PhoneMax | undefined;

/**
 * libphonenumber-js with its small metadata (what the package's default export reads), loaded on the first number
 * through its CommonJS build: the same functions over the same metadata as its ES modules, which every idle service
 * loaded at start (about 130 modules and 2 MiB of heap, issue 48).
 */
export const phoneLibMin = (): typeof PhoneMin => min ??= require('libphonenumber-js/min') as typeof PhoneMin;

/** libphonenumber-js with its full metadata, loaded the same way on first use. */
export const phoneLibMax = (): typeof PhoneMax => max ??= require('libphonenumber-js/max') as typeof PhoneMax;
