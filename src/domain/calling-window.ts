import { luxonLib } from './luxon-lib.ts';
import { WEEKDAYS, type CallingWindow, type Weekday } from '../schemas/campaigns.ts';
import { phoneLibMin } from './phone-lib.ts';

/**
 * Calling windows: when a campaign may start a call, in the callee's own timezone. Pure: the
 * clock is handed in (the campaign activities read it with CAMPAIGN_CLOCK_OFFSET_SECONDS added,
 * so a test can stand just before a window closes).
 */

/** Countries in one zone, or with one zone most callees live in (a country missing here falls back to the campaign's timezone). */
const COUNTRY_ZONES: Record<string, string> = {
  GB: 'Europe/London', IE: 'Europe/Dublin', FR: 'Europe/Paris', DE: 'Europe/Berlin', ES: 'Europe/Madrid', IT: 'Europe/Rome',
  NL: 'Europe/Amsterdam', BE: 'Europe/Brussels', CH: 'Europe/Zurich', AT: 'Europe/Vienna', SE: 'Europe/Stockholm',
  NO: 'Europe/Oslo', DK: 'Europe/Copenhagen', FI: 'Europe/Helsinki', PL: 'Europe/Warsaw', CZ: 'Europe/Prague',
  PT: 'Europe/Lisbon', GR: 'Europe/Athens', RO: 'Europe/Bucharest', HU: 'Europe/Budapest', UA: 'Europe/Kyiv',
  TR: 'Europe/Istanbul', IL: 'Asia/Jerusalem', AE: 'Asia/Dubai', IN: 'Asia/Kolkata', SG: 'Asia/Singapore',
  JP: 'Asia/Tokyo', KR: 'Asia/Seoul', CN: 'Asia/Shanghai', HK: 'Asia/Hong_Kong', PH: 'Asia/Manila', ZA: 'Africa/Johannesburg',
  NG: 'Africa/Lagos', EG: 'Africa/Cairo', KE: 'Africa/Nairobi', NZ: 'Pacific/Auckland', AR: 'America/Argentina/Buenos_Aires',
  CO: 'America/Bogota', PE: 'America/Lima', CL: 'America/Santiago',
  // +1 countries other than the US and Canada (libphonenumber-js tells them apart by area code).
  JM: 'America/Jamaica', PR: 'America/Puerto_Rico', DO: 'America/Santo_Domingo', BS: 'America/Nassau', TT: 'America/Port_of_Spain', BB: 'America/Barbados',
};

/**
 * North American area codes outside the Eastern zone (the default of a known +1 geographic area code).
 * libphonenumber-js tells a +1 number's country (US, CA, JM...) but, unlike the Java library's
 * PhoneNumberToTimeZonesMapper, ships no time-zone data: the zones of US and Canadian area codes stay here.
 */
const NANP_ZONES: Record<string, string> = {};
const nanp = (zone: string, codes: string) => { for (const code of codes.split(' ')) NANP_ZONES[code] = zone; };
nanp('America/Los_Angeles', '206 209 213 253 279 310 323 341 360 408 415 424 425 442 503 509 510 530 541 559 562 564 619 626 628 650 657 661 669 702 707 714 725 747 760 775 805 818 820 831 858 909 916 925 949 951 971 604 778 236 250 672');
nanp('America/Denver', '208 303 307 385 406 435 505 575 719 720 801 970 983 986 403 587 780 825 368');
nanp('America/Phoenix', '480 520 602 623 928');
nanp('America/Chicago', '205 210 214 217 218 219 224 225 228 251 254 256 262 270 281 309 312 314 316 318 319 320 331 334 337 346 361 364 402 405 409 417 430 432 463 469 479 501 504 507 512 515 531 563 573 580 601 605 608 612 615 618 620 630 636 641 651 656 659 662 682 701 708 712 713 715 726 731 737 763 769 773 779 785 806 815 816 817 830 832 847 854 870 872 901 903 913 915 918 920 930 931 936 938 940 945 952 956 972 979 985 204 431 306 639');
nanp('America/Anchorage', '907');
nanp('Pacific/Honolulu', '808');
const NANP_EASTERN = new Set(('201 202 203 207 212 215 216 220 223 229 231 234 239 240 248 267 272 276 301 302 304 305 313 315 317 321 326 330 332 336 339 347 351 352 380 386 401 404 407 410 412 413 414 419 423 434 440 443 445 448 470 475 478 484 502 508 513 516 517 518 540 551 561 567 570 571 574 585 586 603 606 607 609 610 614 616 617 631 646 667 678 680 681 689 703 704 706 716 717 718 724 727 732 734 740 743 754 757 762 765 770 772 774 781 786 802 803 804 810 812 813 814 828 838 839 843 845 848 854 856 857 859 860 862 863 864 878 904 908 910 912 914 917 919 929 934 937 939 941 947 954 959 973 978 980 984 989 '
  + '416 647 437 905 289 365 613 343 705 249 519 226 548 807 514 438 450 579 418 581 819 873 367 354 902 782 506 709').split(' '));

/** The zone of a number from its country and (North America) area code; `fallback` when it cannot be told. */
export function zoneOfNumber(e164: string, fallback: string): string {
  let country: string | undefined;
  try { country = phoneLibMin().parsePhoneNumberFromString(e164)?.country; } catch { country = undefined; }
  if (e164.startsWith('+1') && (!country || country === 'US' || country === 'CA')) {
    const area = e164.slice(2, 5);
    if (NANP_ZONES[area]) return NANP_ZONES[area]!;
    if (NANP_EASTERN.has(area)) return 'America/New_York';
    return fallback;
  }
  return (country && COUNTRY_ZONES[country]) || fallback;
}

/** The wall clock in `zone` at `at`: weekday and seconds since local midnight. */
export function localClock(zone: string, at: Date): { weekday: Weekday; secondOfDay: number } {
  const local = luxonLib().DateTime.fromJSDate(at, { zone });
  return { weekday: WEEKDAYS[local.weekday - 1]!, secondOfDay: local.hour * 3600 + local.minute * 60 + local.second };
}

/** `HH:MM` as hour and minute. */
const timeOf = (hhmm: string) => ({ hour: Number(hhmm.slice(0, 2)), minute: Number(hhmm.slice(3, 5)) });
const secondsOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 3600 + Number(hhmm.slice(3, 5)) * 60;

/**
 * Seconds from `now` until a call to someone in `zone` may start under `window`: 0 inside it (or
 * without a window), else until its next opening. Openings are instants on the callee's wall clock
 * (luxon), so a day across a daylight-saving change counts the hour it gains or loses; an opening
 * inside the skipped hour moves forward by that hour (02:30 becomes 03:30), as luxon reads such a time.
 */
export function secondsUntilOpen(window: CallingWindow | null, zone: string, now: Date): number {
  if (!window) return 0;
  const days = new Set<Weekday>(window.days ?? WEEKDAYS);
  const local = luxonLib().DateTime.fromJSDate(now, { zone });
  for (let k = 0; k <= 7; k++) {
    const day = local.plus({ days: k }).startOf('day');
    if (!days.has(WEEKDAYS[day.weekday - 1]!)) continue;
    const opens = day.set(timeOf(window.start));
    if (k === 0 && local >= opens && local < day.set(timeOf(window.end))) return 0;
    if (opens > local) return Math.ceil(opens.diff(local).as('seconds'));
  }
  return 7 * 86_400; // no day allowed: unreachable with a valid window (days has at least one)
}

/** Whether a window is well formed beyond its schema: it ends after it starts. */
export function windowError(window: CallingWindow): string | null {
  return secondsOf(window.end) > secondsOf(window.start) ? null : 'calling_window.end must be after calling_window.start';
}
