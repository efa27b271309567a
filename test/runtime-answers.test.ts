import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, indexedByMeaning, startTestService, type TestService } from './helpers.ts';
import { startAnswersSite, type AnswersSite } from '../bench/answers/site.ts';
import { serveSite, table } from '../bench/answers/serve.ts';
import { startClinicSite } from '../bench/answers/clinic-site.ts';
import { startBakerySite } from '../bench/answers/bakery-site.ts';
import { retrievePassages, searchKnowledge, useAnswerReader } from '../src/answers/retrieval.ts';
import { useSentenceEncoder } from '../src/answers/meaning.ts';
import { groundingOf } from '../src/conversations/lifecycle.ts';
import { createLlmRuntime } from '../src/runtime/llm.ts';
import type { RuntimeAgent } from '../src/runtime/types.ts';
import { startChatCompletionsServer } from './fixtures/chat-completions-server.ts';
import { chunkStore } from '../src/knowledge/chunk-store.ts';
import { loadCorpus, serveCorpusSite } from '../bench/answers/corpus.ts';

// A handful of the answers evaluation's cases (npm run eval:answers), from its three fixture
// sites (the climbing gym, the dental practice and the bakery), through the real crawl and the public widget
// API: what a visitor reads. Only questions of the evaluation's tuning sets, none held out.

interface Crawled { site: AnswersSite; id: string; public_key: string }

let svc: TestService;
let gym: Crawled;
let clinic: Crawled;
let bakery: Crawled;
let bookshop: Crawled;
let fournil: Crawled;

beforeAll(async () => {
  svc = await startTestService({ ALLOW_PRIVATE_NETWORK_TARGETS: true, CRAWL_DELAY_MS: 0 });
  const { token } = await svc.newOrg();
  const api = client(svc.url, token);
  const crawled = async (name: string, site: AnswersSite): Promise<Crawled> => {
    const created = await api.post('/api/v1/rest/agents', { name, site_url: `${site.url}/` });
    expect(created.status, created.text).toBe(201);
    await indexedByMeaning(api, created.body.id);
    return { site, id: created.body.id, public_key: created.body.public_key };
  };
  [gym, clinic, bakery, bookshop, fournil] = await Promise.all([
    startAnswersSite().then((site) => crawled('Cedar & Pine', site)),
    startClinicSite().then((site) => crawled('Brightwater Dental', site)),
    startBakerySite().then((site) => crawled('Hearth & Crumb', site)),
    serveSite(BOOKSHOP).then((site) => crawled('Quire Books', site)),
    serveSite(FOURNIL).then((site) => crawled('Le Fournil', site)),
  ]);
  // Three sites' passages encoded (after each is ready, issue 48) on a 2-core machine shared with other work.
}, 300_000);
afterAll(async () => {
  await svc?.stop();
  await gym?.site.close();
  await clinic?.site.close();
  await bakery?.site.close();
  await bookshop?.site.close();
  await fournil?.site.close();
});

/** A two-page shop whose wrapping page says who gets "a little extra" in the passage after the one that promises it. */
const BOOKSHOP = {
  brand: 'Quire Books', nav: [['/', 'Home'], ['/wrapping', 'Gift wrapping'], ['/repairs', 'Book repairs']] as const, pages: {
    '/': { title: 'Home', body: '<h1>Quire Books</h1><p>An independent bookshop with new and second-hand books, open every day.</p>' },
    '/wrapping': { title: 'Gift wrapping', body: `<h1>Gift wrapping</h1>
      <p>We wrap any book you buy from us in recycled paper with a ribbon, while you wait. Card holders get a little extra.</p>
      <h2>Card holders</h2><p>Quire card holders get their wrapping free and a handwritten gift tag.</p>
      <h2>Everyone else</h2><p>Wrapping costs $2 a book.</p>` },
    '/repairs': { title: 'Book repairs', body: `<h1>Book repairs</h1><p>We mend the books you love in our back room.</p>
      ${table(['Repair', 'Price', 'Time'], [['Cover cleaning', '$10 a book', 'One day'], ['Spine repair', '$35 a book', 'Two weeks']])}` },
  },
};

/** A French bakery's three pages: its breads in a table, its shop, its workshops. */
const FOURNIL = {
  brand: 'Le Fournil', nav: [['/', 'Accueil'], ['/pains', 'Nos pains'], ['/ateliers', 'Ateliers']] as const, pages: {
    '/': { title: 'Accueil', body: `<h1>Le Fournil</h1><p>Boulangerie artisanale au levain, ouverte du mardi au dimanche.</p>
      <p>Nous cuisons chaque matin dans notre fournil, rue des Tanneurs, et nos farines viennent de moulins de la région.</p>` },
    '/pains': { title: 'Nos pains', body: `<h1>Nos pains</h1><p>Tous nos pains sont façonnés à la main et cuits sur place.</p>
      ${table(['Pain', 'Poids', 'Prix', 'Disponibilité'], [
        ['Pain de campagne', '800 g', '4,60 €', 'Tous les jours'], ['Pain aux figues', '400 g', '5,10 €', 'Samedi'],
        ['Baguette tradition', '250 g', '1,30 €', 'Tous les jours'], ['Pain de seigle', '500 g', '3,90 €', 'Vendredi et samedi'],
      ])}` },
    '/ateliers': { title: 'Ateliers', body: `<h1>Ateliers</h1><p>Le samedi après-midi, apprenez à faire votre pain avec nos boulangers.</p>
      <p>Chaque atelier dure trois heures et chacun repart avec son pain.</p>` },
  },
};

async function ask(question: string, agent: Crawled = gym): Promise<string> {
  const pub = client(svc.url);
  const base = `/api/v1/public/widgets/${agent.public_key}/conversations`;
  const started = await pub.post(base, { page_url: `${agent.site.url}/` });
  expect(started.status, started.text).toBe(201);
  const sent = await pub.post(`${base}/${started.body.conversation_id}/messages`, { text: question }, { 'x-visitor-token': started.body.visitor_token });
  expect(sent.status, sent.text).toBe(200);
  return (sent.body.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n');
}

describe('answers a visitor reads', () => {
  it('a price from a table row, as one sentence with its source', async () => {
    const reply = await ask('How much is a day pass?');
    expect(reply).toMatch(/^Day pass — Price: \$22; What you get: One visit, all day\.\nSource: http:\/\/127\.0\.0\.1:\d+\/pricing$/);
  });

  it('a message read by its parts: a story before the question, and two questions each answered', async () => {
    // Issue 39: read whole, the story outweighs the question; two questions got one answer.
    expect(await ask('first time here, never climbed. how much is a day pass'))
      .toContain('$22');
    const both = await ask('how much is a day pass and do i need any experience');
    expect(both).toContain('$22');
    expect(both).toMatch(/do not need any experience/);
  });

  it('the second of two questions asks about what the first names ("…and how long does it take")', async () => {
    // Read alone, "how long does it take" is any repair's time: the first row's.
    const both = await ask('how much is a spine repair and how long does it take', bookshop);
    expect(both).toContain('$35');
    expect(both).toMatch(/two weeks/i);
    expect(both).not.toMatch(/cover cleaning|one day/i);
  });

  it('a part that names no location gets the cells of the one the whole message names', async () => {
    // "how late is it open on a wednesday" names neither gym: the message does.
    const reply = await ask('where is the eastside gym, and how late is it open on a wednesday');
    expect(reply).toContain('10 am – 10 pm');
    expect(reply).not.toContain('6 am – 11 pm');
  });

  it('the word for the kind of answer in the plural gets each row of the table that answers, not the first alone', async () => {
    const reply = await ask('what are your book repair prices', bookshop);
    expect(reply).toContain('$10');
    expect(reply).toContain('$35');
  });

  it('a day inside a range ("Tuesday to Friday" holds Wednesday), and a street address for "where"', async () => {
    expect(await ask('How late is Riverside open on a Wednesday?')).toMatch(/^Tuesday to Friday — Riverside: 6 am – 11 pm/);
    expect(await ask('Where is the Riverside gym?')).toMatch(/^120 Mill Street, Portland, OR 97214\./);
  });

  it('words WordNet derives from each other ("rent" and "rental"), and "money back" read as a refund', async () => {
    expect(await ask('How much does it cost to rent climbing shoes?')).toContain('$6');
    expect(await ask('Can I get my money back on an annual membership?')).toMatch(/^Yes, annual memberships can be refunded within 14 days/);
  });

  it('a person for "who", named in full from the heading', async () => {
    expect(await ask('Who teaches the lead climbing course?')).toContain('Maya Chen');
  });

  it('"Yes, …" to a yes/no question the text answers', async () => {
    expect(await ask('Are there showers?')).toMatch(/^Yes, both gyms have locker rooms with showers\./);
  });

  it('what the site does say when the question names a place it does not', async () => {
    const reply = await ask('Do you have a gym in Seattle?');
    expect(reply).toMatch(/^Our site doesn't mention Seattle\./);
    expect(reply).toContain('Portland');
    // Eastside is one of the two gyms, only not for parties: what the site says, not that it never mentions Eastside.
    expect(await ask('Can we have a birthday party at Eastside?')).toMatch(/^Parties are held on Saturdays and Sundays at Riverside only\./);
  });

  it('admits what the site does not say, with no look-alike sentence; retrieval (the LLM\'s tool too) finds nothing', async () => {
    const reply = await ask('Do you sell gift cards?');
    expect(reply).toMatch(/^I'm sorry, I don't know the answer to that\./);
    expect(reply).not.toMatch(/source/i);
    expect(await searchKnowledge(chunkStore(svc.sql), gym.id, 'Do you sell gift cards?')).toEqual([]);
    expect((await searchKnowledge(chunkStore(svc.sql), gym.id, 'How much is a day pass?'))[0]).toMatchObject({ answer: expect.stringContaining('$22') });
  });
});

describe('answers the words alone do not reach', () => {
  it('a sentence of the passage the rankings agree on, when the question\'s words fall short of the threshold (French, in shorthand)', async () => {
    // Both were "I don't know" when only a sentence's words reaching the threshold answered.
    expect(await ask('c quoi le prix du pain aux figues svp', fournil)).toMatch(/^Pain aux figues — Prix: 5,10 €\.\n/);
    expect(await ask('hw much le pain aux figues', fournil)).toMatch(/^Pain aux figues — .*Prix: 5,10 €/);
    // The agreement is between rankings: a price the site does not give is still not given.
    expect(await ask('c cb la livraison', fournil)).toMatch(/^(I'm sorry, I don't know|Je suis désolé)/);
  });
});

describe('answers on a second site (a dental practice)', () => {
  it('a question about the means of payment fetches the passages naming them, though they have none of its words (not an evaluation question)', async () => {
    expect(await ask('What forms of payment do you take?')).toMatch(/^We accept cash, debit and all major credit cards\./);
  });

  it('a title does not end a sentence, and "which of your doctors" wants a person', async () => {
    expect(await ask('Which of your doctors does Invisalign?', clinic)).toMatch(/^Dr\. Amara Osei, our orthodontist, straightens teeth with Invisalign clear aligners\.\nSource: /);
  });

  it('"No, …" when the negation is about what was asked, and not when it is about something else', async () => {
    expect(await ask('Do you take Medicaid?', clinic)).toMatch(/^No, we do not accept BadgerCare Plus or other Medicaid plans\./);
    expect(await ask('Is there a charge if I miss my appointment?', clinic)).toMatch(/^Cancelling with less notice, or not showing up, costs \$50\./);
  });

  it('a two-word name WordNet knows ("laughing gas" is nitrous oxide), and the contact page\'s number for "your phone number"', async () => {
    expect(await ask('How much extra is laughing gas?', clinic)).toMatch(/^Nitrous oxide is available at both offices for \$60 per visit/);
    expect(await ask("What's your phone number?", clinic)).toMatch(/^Front desk: \(608\) 555-0173/);
  });

  it('the town the business is in, for a place it does not have; "I don\'t know" with no look-alike for what it does not say', async () => {
    // Milwaukee is on the site, in a blog post about a dentist there: not "Our site doesn't mention Milwaukee", but no
    // office of the practice is there. Then every street address of the offices page, each under its office's name, though
    // the best sentence there gives only the town ("Both offices are in Madison, Wisconsin…").
    expect(await ask('Do you have an office in Milwaukee?', clinic)).toMatch(
      /^Our site doesn't mention an office in Milwaukee\. (West: 7010 Mineral Point Road, Madison, WI 53717\. Downtown: 215 State Street|Downtown: 215 State Street, Suite 300, Madison, WI 53703\. West: 7010 Mineral Point Road)/);
    const reply = await ask("What's the Wi-Fi password?", clinic);
    expect(reply).toMatch(/^I'm sorry, I don't know the answer to that\./);
    expect(reply).not.toMatch(/source/i);
    expect(await searchKnowledge(chunkStore(svc.sql), clinic.id, "What's the Wi-Fi password?")).toEqual([]);
  });
});

describe('answers on a third site (a bakery)', () => {
  it('the business\'s own premises ("the bakery") and an adverb ("exactly") are not what is asked about', async () => {
    expect(await ask('Where exactly is the Back Cove bakery?', bakery)).toMatch(/^780 Forest Avenue, Portland, ME 04103\.\nSource: /);
  });

  it('a named day is that day ("Christmas" is not "Christmas Eve"), and the yes or no follows the sentence that names it', async () => {
    // The "No" is the sentence naming Christmas Day; the Eve follows it, as what the site says next on the same thing.
    expect(await ask('Are you open on Christmas?', bakery)).toMatch(/^No, both cafés are closed on Thanksgiving, Christmas Day and New Year's Day\. On Christmas Eve we close at noon\.\nSource: /);
  });

  it('a shop asked for in a town the site names for something else: not there, without a "Yes", and every café\'s address under its name', async () => {
    // Boston is on the site (where the founder once worked); no café is there.
    expect(await ask('Do you have a shop in Boston?', bakery)).toMatch(
      /^Our site doesn't mention a shop in Boston\. Old Port: 41 Wharf Street, Portland, ME 04101\. Back Cove: 780 Forest Avenue, Portland, ME 04103\.\nSource: /);
    // Its own word for them ("café", written as the visitor wrote it) is not there either: the founder worked "at a hotel in Boston".
    const cafe = await ask('Do you have a café in Boston?', bakery);
    expect(cafe, cafe).toMatch(/^Our site doesn't mention a café in Boston\. (Old Port: 41 Wharf Street, Portland, ME 04101\. Back Cove: 780 Forest Avenue, Portland, ME 04103|Back Cove: 780 Forest Avenue, Portland, ME 04103\. Old Port: 41 Wharf Street, Portland, ME 04101)\.\nSource: /);
    // In a town it is in, whatever the visitor calls its premises, their address.
    expect(await ask('Do you have a shop in Portland?', bakery)).toMatch(/^Yes, (41 Wharf Street|780 Forest Avenue), Portland, ME 0410[13]\.\nSource: /);
  });

  it('a phone question is answered by the number even when it names the premises ("the bakery\'s phone"), the general one first', async () => {
    expect(await ask("What's the bakery's phone number?", bakery)).toMatch(/^Call either café at \(207\) 555-0112 during opening hours\.\nSource: /);
  });

  it('an adverb\'s synonym ("inside", "indoors") and a negation asked about ("if I don\'t come") find the sentence that says so', async () => {
    expect(await ask('Can I bring my dog inside?', bakery)).toMatch(/^No, dogs are welcome on the Back Cove patio, but not indoors\.\nSource: /);
    expect(await ask("What happens if I don't come to get my pre-order?", bakery)).toMatch(/^Orders that are not collected by closing time are donated to a local food pantry\./);
  });

  it('"the bakery" is the business its pages call by name, and "started" is how they say it ("opened", WordNet\'s kind of "found")', async () => {
    expect(await ask('Who started the bakery?', bakery)).toMatch(/^Nadia Brooks opened Hearth & Crumb in 2014/);
  });

  it('"eat" is met by the foods a sentence names (WordNet files a baguette under food)', async () => {
    expect(await ask('What can vegans eat at your place?', bakery)).toMatch(/^Vegan choices: the country sourdough, the baguette and the morning glory muffin\.\nSource: /);
  });

  it('"eat" weighs as a kind of answer (a food), not as the rarest word: the sentence naming gluten answers "cannot eat gluten"', async () => {
    // "Yes, …": its heading, "Allergens and diets", meets "eat" too (WordNet defines "diet" as to "eat sparingly…").
    expect(await ask('Do you have anything for people who cannot eat gluten?', bakery)).toMatch(/^Yes, gluten-free brownies and flourless almond cakes are baked on Fridays, in the same kitchen\.\nSource: \S+\/allergens$/);
  });

  it('a word\'s family Porter2 stems apart is fetched and found: "allergies" reads the page on allergens', async () => {
    const [found] = await searchKnowledge(chunkStore(svc.sql), bakery.id, 'What about allergies?');
    expect(found?.url).toMatch(/\/allergens$/);
  });

  it('a hyphenated word is asked about whole: "free" and "eggs" in an allergen notice do not answer "free-range eggs"', async () => {
    const reply = await ask('Are your eggs free-range?', bakery);
    expect(reply).toMatch(/^I'm sorry, I don't know the answer to that\./);
    expect(reply).not.toMatch(/source/i);
  });

  it('a paraphrase the words alone do not answer, found by its meaning (the LLM\'s tool gets the same sentence)', async () => {
    // "notice" / "at least 72 hours before": the lexical score is under the threshold; the sentence encoder finds it.
    expect(await ask('How much notice do you need for a birthday cake?', bakery)).toMatch(/^Order custom cakes at least 72 hours before you need them\.\nSource: /);
    const [found] = await searchKnowledge(chunkStore(svc.sql), bakery.id, 'How much notice do you need for a birthday cake?');
    expect(found).toMatchObject({ answer: 'Order custom cakes at least 72 hours before you need them.' });
    expect(await ask('Do I have to pay extra for gear when I take a class?')).toMatch(/^Every class includes gear rental\.\nSource: /);
  });

  it('a sentence far closer in meaning than any other answers though only fairly close ("a toothache at night?" / "Outside office hours…")', async () => {
    expect(await ask('What number do I ring if I have a toothache at night?', clinic)).toMatch(/^Outside office hours, our on-call dentist answers at \(608\) 555-0199\./);
    // Once read by meaning too; now by its words, "my car" being what parking implies.
    expect(await ask('Where can I park my car at Riverside?')).toMatch(/^Free parking in the lot behind the building\.\nSource: \S+\/locations$/);
  });

  it('SENTENCE_ENCODER=off: the same paraphrase is not read by meaning (the site does not say, in its words)', async () => {
    useSentenceEncoder(false);
    try {
      expect(await searchKnowledge(chunkStore(svc.sql), bakery.id, 'How much notice do you need for a birthday cake?')).toEqual([]);
    } finally {
      useSentenceEncoder(true);
    }
    expect(await searchKnowledge(chunkStore(svc.sql), bakery.id, 'How much notice do you need for a birthday cake?')).toHaveLength(1);
  });
});

// Issue 39: with an LLM, search_knowledge returned only what passed the offline runtime's answer threshold, so for most
// questions of a site nobody tuned for the model was handed no passage at all.
describe('the LLM path: the closest passages, with no answer threshold', () => {
  const NOTICE = 'How much notice do you need for a birthday cake?';

  it('the model is handed the passage the offline threshold drops, whole, through the real runtime and retrieval', async () => {
    useSentenceEncoder(false);
    try {
      // With the encoder off, the words alone score the answer under the threshold: the offline runtime would not say it.
      expect(await searchKnowledge(chunkStore(svc.sql), bakery.id, NOTICE)).toEqual([]);
      const passages = await retrievePassages(chunkStore(svc.sql), bakery.id, NOTICE);
      expect(passages.length).toBe(5);
      expect(passages.some((p) => p.text.includes('at least 72 hours before'))).toBe(true);
    } finally {
      useSentenceEncoder(true);
    }
    const llm = await startChatCompletionsServer();
    try {
      llm.enqueue({ toolCalls: [{ id: 'call_1', name: 'search_knowledge', args: { query: NOTICE } }] }, { content: 'At least 72 hours.' });
      const agent: RuntimeAgent = {
        id: bakery.id, name: 'Hearth & Crumb', persona: null, greeting: null, guardrails: [], goals: [], acceptance_criteria: [], data_schema: [],
        default_language: 'en', config_variables: null, can_transfer: false,
      };
      const runtime = createLlmRuntime({ baseUrl: llm.baseUrl, apiKey: 'test-key', model: 'test-model' });
      const turn = await runtime.reply({
        agent, messages: [{ id: '1', role: 'visitor', text: NOTICE, ts: new Date().toISOString() }], captured: {}, contactFacts: {}, language: 'en',
      }, groundingOf(svc.sql, bakery.id));
      expect(turn.replies).toEqual(['At least 72 hours.']);
      const tool = llm.requests[1]!.body.messages.at(-1);
      expect(tool.role).toBe('tool');
      const given = JSON.parse(tool.content).passages as { text: string; url: string }[];
      expect(given).toHaveLength(5);
      expect(given.some((p) => p.text.includes('Order custom cakes at least 72 hours before you need them.'))).toBe(true);
      // The prompt tells the model that the passages may not answer, and how to decline.
      expect(llm.requests[0]!.body.messages[0].content).toContain('It returns the closest passages whether or not they answer');
    } finally {
      await llm.close();
    }
  });

  it('a passage comes with the passages next to it on its page, under their own headings, and none is given twice', async () => {
    const question = 'do card holders pay for wrapping';
    const passages = await retrievePassages(chunkStore(svc.sql), bookshop.id, question);
    // Whichever of the page's passages the words found, the model reads the promise, the heading and the terms together.
    const wrapping = passages.find((p) => p.url.endsWith('/wrapping'))!;
    expect(wrapping.text).toContain('Card holders get a little extra.');
    expect(wrapping.text).toContain('Card holders\nQuire card holders get their wrapping free');
    expect(wrapping.text).toContain('Everyone else\nWrapping costs $2 a book.');
    expect(wrapping.text.length).toBeLessThanOrEqual(1200);
    // The passages its window holds are not given again.
    expect(passages.filter((p) => p.text.includes('get their wrapping free'))).toHaveLength(1);
  });

  it('an agent with no knowledge yet gets no passage, by either reader', async () => {
    const { token } = await svc.newOrg();
    const created = await client(svc.url, token).post('/api/v1/rest/agents', { name: 'Blank' });
    expect(created.status, created.text).toBe(201);
    expect(await retrievePassages(chunkStore(svc.sql), created.body.id, 'what are your opening hours')).toEqual([]);
    expect(await searchKnowledge(chunkStore(svc.sql), created.body.id, 'what are your opening hours')).toEqual([]);
    useAnswerReader('learned');
    try {
      expect(await searchKnowledge(chunkStore(svc.sql), created.body.id, 'what are your opening hours')).toEqual([]);
    } finally {
      useAnswerReader('ranked');
    }
  });

  it('a question with none of the page\'s words finds its passage by meaning (the encoder\'s vectors, stored at crawl time)', async () => {
    const rows = await svc.sql<{ n: number }[]>`select count(*)::int as n from page_chunks c join sites s on s.id = c.site_id
      where s.agent_id = ${gym.id} and c.generation = s.generation and c.embedding is not null`;
    expect(rows[0]!.n).toBeGreaterThan(20);
    const question = 'is it ok if ive never done this before';
    expect((await retrievePassages(chunkStore(svc.sql), gym.id, question)).map((p) => p.text).join('\n')).toContain('No, you do not need any experience.');
    useSentenceEncoder(false);
    try {
      // By its words alone nothing is found: every word of it is a stop word or a vague verb.
      expect(await retrievePassages(chunkStore(svc.sql), gym.id, question)).toEqual([]);
    } finally {
      useSentenceEncoder(true);
    }
  });
});

describe('ANSWER_READER=learned: the reader fitted on the answers corpus', () => {
  it('answers a fact of a site it was not fitted on, and says nothing for what the site does not say', async () => {
    useAnswerReader('learned');
    try {
      expect((await searchKnowledge(chunkStore(svc.sql), gym.id, 'How much is a day pass?'))[0]).toMatchObject({ answer: expect.stringContaining('$22') });
      expect(await ask('How much is a day pass?')).toMatch(/\$22/);
      expect(await searchKnowledge(chunkStore(svc.sql), gym.id, 'Do you sell gift cards?')).toEqual([]);
      // Without the sentence encoder, whose features it reads, the ranked reader answers.
      useSentenceEncoder(false);
      expect((await searchKnowledge(chunkStore(svc.sql), gym.id, 'How much is a day pass?'))[0]).toMatchObject({ answer: expect.stringContaining('$22') });
    } finally {
      useSentenceEncoder(true);
      useAnswerReader('ranked');
    }
  });
});

// Questions a visitor might ask that are none of the evaluation's: what was wrong before, on the same sites.
describe('made-up questions on the evaluation\'s sites', () => {
  it('"What are your hours?" gets the week\'s rows, or those of the days asked, not one row or a post about Lisbon', async () => {
    expect(await ask('When are you open?', bakery)).toMatch(/^Monday — Old Port: Closed; Back Cove: 7 am – 3 pm\. Tuesday to Friday — .+ Saturday — .+ Sunday — Old Port: 8 am – 2 pm; Back Cove: 8 am – 2 pm\.\nSource: \S+\/hours$/);
    // The days asked, each row with the location named only (Back Cove's hours are not Old Port's).
    expect(await ask('What are your weekend hours at Old Port?', bakery)).toMatch(/^Saturday — Old Port: 8 am – 6 pm\. Sunday — Old Port: 8 am – 2 pm\.\nSource: /);
    // A holiday's hours come after the week's when no day is named.
    expect(await ask('What time do you open?')).toMatch(/^Monday — Riverside: 6 am – 11 pm; Eastside: Closed\./);
    expect(await ask('What time do you open on Saturday?', bakery)).toMatch(/^Saturday — Old Port: 8 am – 6 pm; Back Cove: 8 am – 4 pm\.\nSource: /);
  });

  it('a sentence close in meaning that names no price does not say what something costs', async () => {
    // The site gives no price for a tasting; the encoder's closest sentence ("Wedding cakes start with a tasting…") was the reply.
    expect(await ask('What does a wedding cake tasting cost?', bakery)).toMatch(/^I'm sorry, I don't know the answer to that\./);
  });
});

// Issue 39, French: a French page's accented words are found by a visitor who types without accents, in full text
// and in the word counts that weigh a question's words (migration 056), and an FAQ entry answers whole. The corpus's
// French development site (anyone may read it; test sites are never read here).
describe('a French site, asked without accents', () => {
  let fr: { id: string; public_key: string; url: string; close(): Promise<void> };
  beforeAll(async () => {
    const [site] = loadCorpus(['dev-fr-boulangerie']);
    const served = await serveCorpusSite(site!);
    const api = client(svc.url, (await svc.newOrg()).token);
    const created = await api.post('/api/v1/rest/agents', { name: site!.brand, site_url: `${served.url}/` });
    expect(created.status, created.text).toBe(201);
    expect((await api.patch(`/api/v1/rest/agents/${created.body.id}`, { default_language: 'fr' })).status).toBe(200);
    await indexedByMeaning(api, created.body.id);
    fr = { id: created.body.id, public_key: created.body.public_key, url: served.url, close: () => served.close() };
  }, 300_000);
  afterAll(async () => {
    await fr?.close();
  });

  it('counts and finds "fidélité" and "gâteaux" written "fidelite" and "gateaux"', async () => {
    const { df } = await chunkStore(svc.sql).countChunksWithWords(fr.id, ['fidelite', 'gateaux']);
    expect(df.get('fidelite')).toBeGreaterThan(0);
    expect(df.get('gateaux')).toBeGreaterThan(0);
    // The question's word with its accents counts as the same word.
    expect((await chunkStore(svc.sql).countChunksWithWords(fr.id, ['fidélité'])).df.get('fidelite')).toBe(df.get('fidelite'));
    const found = await chunkStore(svc.sql).findChunksWithAnyWord(fr.id, ['fidelite'], 5);
    expect(found.some((c) => /fidélité/i.test(`${c.section} ${c.text}`))).toBe(true);
  });

  it('answers "how does the loyalty card work" with the FAQ entry\'s answer, the card, the stamps and the reward', async () => {
    const pub = client(svc.url);
    const base = `/api/v1/public/widgets/${fr.public_key}/conversations`;
    const started = await pub.post(base, { page_url: `${fr.url}/` });
    const sent = await pub.post(`${base}/${started.body.conversation_id}/messages`, { text: 'la carte de fidelite ca marche comment' }, { 'x-visitor-token': started.body.visitor_token });
    const reply = (sent.body.messages as { role: string; text: string }[]).filter((m) => m.role === 'agent').map((m) => m.text).join('\n');
    expect(reply).toMatch(/10 tampons/);
    expect(reply).toMatch(/levain/);
  });
});
