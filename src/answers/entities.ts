import { fold } from './text.ts';

/**
 * The entity a passage belongs to: the location, product, service or person its section is about,
 * read from where it stands on the site, never from a list of words. A site's names are the words
 * it writes with a capital inside its sentences, at least twice and never in lower case
 * ("Millbrook", "Rowan Lake", "Dr. Okafor"); a passage's entity is the names of its section path
 * (page title, headings) other than the brand's (the names most page titles carry). A question that
 * names an entity prefers that entity's passages: those under another entity's heading come after
 * them, so that one location's hours are not given for another's.
 */

/** Where a passage stands: its page and its section path ("Page title › Heading › Subheading"). */
export interface Placed { url: string; title: string | null; section: string | null }

export interface SiteEntities {
  /** Every name of the site (lower case). */
  names: Set<string>;
  /**
   * The names that head a section or title a page (lower case), each with the groups of siblings it stands in: the
   * headings under one parent (the locations page's "Millbrook" and "Rowan Lake"), or the titles of pages in one folder.
   */
  entities: Map<string, Set<string>>;
  /** The brand's words, in most page titles (lower case): no entity. */
  brand: Set<string>;
}

const WORD = /[\p{L}][\p{L}'’-]*[\p{L}]|[\p{L}]/gu;
/** A word as names are compared: lower case, no accents, no possessive ("Millbrook's"). */
const asName = (w: string) => fold(w).replace(/'s$/, '');
/** A capital first, not all capitals ("Millbrook", not "FAQ"). */
const capitalised = (w: string) => /^\p{Lu}/u.test(w) && /\p{Ll}/u.test(w);

/** Days and months are written with a capital, and are no entities: when something happens, not what it is about. */
const CALENDAR = /^(monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche|janvier|fevrier|mars|avril|mai|juin|juillet|aout|septembre|octobre|novembre|decembre)s?$/;
/** A title's full stop ends no sentence ("Dr. Okafor"). */
const TITLE = /\b(Dr|Mr|Mrs|Ms|Mx|Prof|St|Mme|Mlle|M)\.\s/g;

/** An e-mail or web address: its words are written in lower case whatever they name ("eastfield@…" for the Eastfield office). */
const ADDRESS = /[\w.+-]+@[\w.-]+|\bhttps?:\/\/\S+|\bwww\.\S+/gi;

/** The names a set of texts writes: capitalised inside a sentence at least twice, never in lower case (addresses aside). */
export function siteNames(texts: string[]): Set<string> {
  const inside = new Map<string, number>();
  const lower = new Set<string>();
  for (const text of texts) {
    for (const sentence of text.replace(ADDRESS, ' ').replace(TITLE, '$1 ').split(/(?<=[.!?:;])\s+|\n+/)) {
      const words = sentence.match(WORD) ?? [];
      words.forEach((w, i) => {
        const f = asName(w);
        if (f.length < 3) return;
        if (/^\p{Ll}/u.test(w)) lower.add(f);
        else if (i > 0 && capitalised(w)) inside.set(f, (inside.get(f) ?? 0) + 1);
      });
    }
  }
  return new Set([...inside].filter(([w, n]) => n >= 2 && !lower.has(w) && !CALENDAR.test(w)).map(([w]) => w));
}

const namesOf = (text: string, names: Set<string>) => new Set((text.match(WORD) ?? []).map(asName).filter((w) => names.has(w)));

/** The section path of a place: its page title, then its headings. */
const pathOf = (place: Placed): string[] => (place.section ?? place.title ?? '').split(' › ');

/** The site's entities from its passages' places and texts. */
export function siteEntities(places: (Placed & { text: string })[]): SiteEntities {
  const names = siteNames(places.map((p) => p.text));
  // The brand: the words of most page titles ("Kestrel Physio" in "Pricing | Kestrel Physio").
  const titles = [...new Set(places.map((p) => p.title ?? ''))].filter(Boolean);
  const inTitles = new Map<string, number>();
  for (const title of titles) for (const w of new Set((title.match(WORD) ?? []).map(asName))) inTitles.set(w, (inTitles.get(w) ?? 0) + 1);
  const brand = new Set([...inTitles].filter(([, n]) => n >= Math.max(2, titles.length / 2)).map(([w]) => w));
  const entities = new Map<string, Set<string>>();
  const add = (text: string, group: string) => {
    for (const n of namesOf(text, names)) if (!brand.has(n)) entities.set(n, (entities.get(n) ?? new Set()).add(group));
  };
  for (const p of places) {
    const parts = pathOf(p);
    let folder = '/';
    try { folder = new URL(p.url, 'http://x').pathname.replace(/[^/]*$/, ''); } catch { /* a URL that is none: the root */ }
    add(parts[0] ?? '', `title:${folder}`);
    for (let i = 1; i < parts.length; i++) add(parts[i]!, `heading:${p.url}:${parts.slice(0, i).join(' › ')}`);
  }
  return { names, entities, brand };
}

/** The entity names of a passage's place: those of its section path (or page title), the brand's left out. */
export function entityOf(place: Placed, site: SiteEntities): Set<string> {
  return new Set([...namesOf(place.section ?? place.title ?? '', site.names)].filter((n) => site.entities.has(n)));
}

/** The site's entities a question names (in any case: "millbrook", "Millbrook"). */
export function entitiesAsked(question: string, site: SiteEntities): Set<string> {
  return new Set((question.match(WORD) ?? []).map(asName).filter((w) => site.entities.has(w)));
}

const siblings = (a: string, b: string, site: SiteEntities) => [...site.entities.get(a) ?? []].some((g) => site.entities.get(b)?.has(g));

/**
 * Whether a passage is about what the question names: `asked` (its section or its own sentence names it), `other` (its section names a
 * sibling of it, another of the same kind, and not it: the other location's hours), or `neutral` (anything else: the
 * question names no entity, or the passage's section none of that kind).
 */
export function entityMatch(asked: Set<string>, place: Placed & { sentence?: string }, site: SiteEntities): 'asked' | 'other' | 'neutral' {
  if (!asked.size) return 'neutral';
  const own = entityOf(place, site);
  if ([...own].some((n) => asked.has(n))) return 'asked';
  // A sentence that names what is asked is about it, under whichever heading it stands ("Hilltop does not run walk-ins"
  // on the other clinic's page).
  if (place.sentence && [...namesOf(place.sentence, site.names)].some((n) => asked.has(n))) return 'asked';
  return [...own].some((n) => [...asked].some((a) => siblings(n, a, site))) ? 'other' : 'neutral';
}

/** `items` with those about another entity than the one asked after the others, each group in its order. */
export function preferAsked<T extends Placed>(question: string, items: T[], site: SiteEntities): T[] {
  const asked = entitiesAsked(question, site);
  if (!asked.size) return items;
  const other = items.filter((i) => entityMatch(asked, i, site) === 'other');
  return other.length ? [...items.filter((i) => !other.includes(i)), ...other] : items;
}
