import { describe, expect, it, vi } from 'vitest';
import type { Passage } from '../src/answers/retrieval.ts';
import { composeAnswer } from '../src/answers/answer.ts';
import { evaluateOffline } from '../src/runtime/evaluation.ts';
import { guardrailHit } from '../src/runtime/guardrails.ts';
import { createOfflineRuntime } from '../src/runtime/offline.ts';
import { parseBoolean, parseDate, parseNumber, parsePhone } from '../src/runtime/parsers.ts';
import type { DataField, RuntimeAgent, RuntimeTools, TranscriptMessage } from '../src/runtime/types.ts';

// The runtime alone: its input boundary is RuntimeTools, so the knowledge is the passages each test defines.

const NOW = new Date('2026-03-02T10:00:00.000Z'); // a Monday
const runtime = createOfflineRuntime({ now: () => NOW });

function agentWith(overrides: Partial<RuntimeAgent> = {}): RuntimeAgent {
  return {
    id: '00000000-0000-7000-8000-000000000001', name: 'Ava', persona: null, greeting: null, guardrails: null, goals: null,
    acceptance_criteria: null, data_schema: null, default_language: 'en', config_variables: null, can_transfer: false, ...overrides,
  };
}

const HOURS: Passage = {
  text: 'Acme is open Monday to Friday from 9am to 6pm. We are closed on public holidays. Our team is based in Lyon, France.',
  url: 'https://acme.test/hours', title: 'Opening hours', score: 0.6,
};
const SHIPPING: Passage = {
  text: 'Orders ship within 2 business days. Shipping to France is free above 50 euros. Returns are accepted for 30 days.',
  url: 'https://acme.test/shipping', title: 'Shipping and returns', score: 0.4,
};

function toolsWith(passages: Passage[]) {
  const searchKnowledge = vi.fn(async (_query: string, _limit?: number) => passages);
  return { searchKnowledge } satisfies RuntimeTools;
}

/** A conversation driven turn by turn, the way the service stores it. */
function chat(agent: RuntimeAgent, opts: { language?: string; passages?: Passage[] } = {}) {
  const messages: TranscriptMessage[] = [];
  let captured: Record<string, unknown> = {};
  const tools = toolsWith(opts.passages ?? []);
  const add = (role: TranscriptMessage['role'], text: string) => messages.push({ id: String(messages.length + 1), role, text, ts: NOW.toISOString() });
  return {
    messages, tools,
    get captured() { return captured; },
    async start() {
      add('agent', await runtime.greet(agent, { language: opts.language ?? 'en', contactFacts: {} }));
    },
    async say(text: string) {
      add('visitor', text);
      const turn = await runtime.reply({ agent, messages: [...messages], captured, contactFacts: {}, language: opts.language ?? 'en' }, tools);
      captured = turn.captured;
      for (const reply of turn.replies) add('agent', reply);
      return { ...turn, text: turn.replies.join('\n') };
    },
  };
}

describe('the voice profile\'s formality picks the greetings and closings (issue 43)', () => {
  it('formal: "Hello" and "Thank you"; casual: "Hi there" and "Thanks!"; neutral as before; in English and French', async () => {
    const formal = agentWith({ style: { formality: 'formal', custom_direction: null } });
    const casual = agentWith({ style: { formality: 'casual', custom_direction: 'Sound like a barista.' } });
    expect(await runtime.greet(formal, { language: 'en', contactFacts: {} })).toBe('Hello. My name is Ava. How may I assist you today?');
    expect(await runtime.greet(casual, { language: 'en', contactFacts: { first_name: 'Jo' } })).toBe("Hi there, Jo! I'm Ava. What can I do for you?");
    expect(await runtime.greet(agentWith({ style: { formality: 'neutral', custom_direction: null } }), { language: 'en', contactFacts: {} }))
      .toBe("Hi! I'm Ava. How can I help you today?");
    expect(await runtime.greet(formal, { language: 'fr', contactFacts: {} })).toBe('Bonjour. Je me nomme Ava. En quoi puis-je vous être utile ?');
    const formalChat = chat(formal);
    await formalChat.start();
    expect((await formalChat.say('Hello')).text).toBe('Hello. How may I assist you today?');
    expect((await formalChat.say('Thanks')).text).toBe('Thank you. Is there anything else I may assist you with?');
    expect((await formalChat.say('Bye')).text).toBe('Thank you for contacting us. Good day.');
    const casualChat = chat(casual);
    await casualChat.start();
    expect((await casualChat.say('Hi')).text).toBe('Hi there! What can I do for you?');
    expect((await casualChat.say('thanks')).text).toBe('Thanks! Anything else?');
    expect((await casualChat.say('bye')).text).toBe('Thanks! Have a great one!');
    const french = chat(casual, { language: 'fr' });
    await french.start();
    expect((await french.say('Merci')).text).toBe('Merci ! Autre chose ?');
  });
});

describe('greeting', () => {
  it('substitutes config variables and agent_name, dropping unknown names', async () => {
    const agent = agentWith({ greeting: 'Welcome to {{company}}! I am {{ agent_name }}, {{unknown}}, how can I help?', config_variables: { company: 'Acme' } });
    expect(await runtime.greet(agent, { language: 'en', contactFacts: {} })).toBe('Welcome to Acme! I am Ava, how can I help?');
  });

  it('falls back to a default greeting in the page language, naming a known contact', async () => {
    const agent = agentWith();
    expect(await runtime.greet(agent, { language: 'en', contactFacts: {} })).toBe("Hi! I'm Ava. How can I help you today?");
    expect(await runtime.greet(agent, { language: 'fr', contactFacts: { first_name: 'Léa' } }))
      .toBe("Bonjour Léa ! Je suis Ava. Comment puis-je vous aider aujourd'hui ?");
    expect(await runtime.greet(agentWith({ default_language: 'fr' }), { language: '', contactFacts: {} })).toMatch(/^Bonjour/);
  });
});

describe('answers grounded in knowledge', () => {
  it('answers with the most relevant sentences and quotes the source, recording the search', async () => {
    const c = chat(agentWith(), { passages: [HOURS, SHIPPING] });
    await c.start();
    const turn = await c.say('What are your opening hours?');
    expect(turn.text).toContain('Acme is open Monday to Friday from 9am to 6pm.');
    expect(turn.text).toContain('Source: https://acme.test/hours');
    expect(turn.text).not.toContain('Shipping');
    expect(turn.toolCalls).toEqual([{ name: 'search_knowledge', args: { query: 'What are your opening hours?' }, ts: NOW.toISOString() }]);
    expect(c.tools.searchKnowledge).toHaveBeenCalledWith('What are your opening hours?', 5);
  });

  it('keeps the one or two sentences that answer, from the passage that matches', () => {
    const answer = composeAnswer('How long does shipping to France take, and are returns free?', [HOURS, SHIPPING]);
    expect(answer?.urls).toEqual(['https://acme.test/shipping']);
    expect(answer?.text).toContain('Orders ship within 2 business days.');
    expect(answer?.text).toContain('Returns are accepted for 30 days.');
    expect(answer?.text.split(/(?<=\.) /)).toHaveLength(2);
  });

  it('adds no second sentence for a word the first meets by a precise synonym or under its own heading', () => {
    // "course" is the heading of the row that answers: the next row, another course's price, is no part left out.
    const courses: Passage = {
      text: 'Nitrox — Length: 1 day; Price: $180 per diver. Rescue Course — Length: 3 days; Price: $420 per diver.',
      url: 'https://dive.test/courses', title: 'Dive school', score: 0.8, section: 'Dive school › Courses',
    };
    expect(composeAnswer('What does the nitrox course cost per diver?', [courses])?.text).toBe('Nitrox — Length: 1 day; Price: $180 per diver.');
    // "visit" is met by "book" (a precise synonym): the reminder sentence adds nothing asked for.
    const booking: Passage = {
      text: 'You can book up to eight weeks ahead. We text you a reminder one day before your visit.',
      url: 'https://salon.test/booking', title: 'Salon', score: 0.8, section: 'Salon › Book an appointment',
    };
    expect(composeAnswer('How far out can I schedule a visit?', [booking])?.text).toBe('You can book up to eight weeks ahead.');
    // A part the first leaves out still brings the sentence that answers it (the test above).
  });

  it('keeps the capital of a name after "Yes, " though compromise does not know it ("Priya"), and lowers a common word', () => {
    const team: Passage = { text: 'Priya runs the youth team and the summer camps.', url: 'https://gym.test/team', title: 'Gym', score: 0.9, section: 'Gym › Youth' };
    expect(composeAnswer('Do you have a youth team?', [team])?.text).toBe('Yes, Priya runs the youth team and the summer camps.');
    const lang: Passage = { text: 'Besides English, our team speaks Spanish.', url: 'https://gym.test/about', title: 'Gym', score: 0.9, section: 'Gym › About' };
    expect(composeAnswer('Does your team speak Spanish?', [lang])?.text).toBe('Yes, besides English, our team speaks Spanish.');
    const fee: Passage = { text: 'Cancelling with less notice costs $50.', url: 'https://clinic.test/cancel', title: 'Clinic', score: 0.9, section: 'Clinic › Cancellation' };
    expect(composeAnswer('Do you charge for cancelling with less notice?', [fee])?.text).toBe('Yes, cancelling with less notice costs $50.');
    // A name the question writes with a capital stays one, though WordNet knows an "eastside".
    const hours: Passage = { text: 'Eastside is closed on Mondays.', url: 'https://gym.test/hours', title: 'Gym', score: 0.9, section: 'Gym › Hours' };
    expect(composeAnswer('Is Eastside open on Mondays?', [hours])?.text).toBe('No, Eastside is closed on Mondays.');
    // "Everything", "Anyone": pronouns WordNet does not know, lowered all the same.
    const baked: Passage = { text: 'Everything is baked on site every morning.', url: 'https://bakery.test/', title: 'Bakery', score: 0.9, section: 'Bakery' };
    expect(composeAnswer('Is everything baked on site?', [baked])?.text).toBe('Yes, everything is baked on site every morning.');
  });

  it('a question asked with a negation gets no "Yes" from a sentence that denies nothing', () => {
    const memberships: Passage = { text: 'Memberships work at both climbing gyms.', url: 'https://gym.test/pricing', title: 'Gym', score: 0.9, section: 'Gym › Memberships' };
    expect(composeAnswer('Do memberships work at both climbing gyms?', [memberships])?.text).toBe('Yes, memberships work at both climbing gyms.');
    expect(composeAnswer('Can I climb at both gyms without a membership?', [memberships])?.text).toBe('Memberships work at both climbing gyms.');
  });

  it('a table row with a price in cents gets neither yes nor no ("Almond croissant: $5.25")', () => {
    const menu: Passage = { text: 'Almond croissant: $5.25', url: 'https://bakery.test/menu', title: 'Bakery', score: 0.9, section: 'Bakery › Menu' };
    expect(composeAnswer('Is there an almond croissant?', [menu])?.text).toBe('Almond croissant: $5.25.');
  });

  it('"only" denies its own part of a sentence: "street parking only; the bus stops in front" is no "No" to a bus stop', () => {
    const eastside: Passage = { text: 'Street parking only; the number 4 bus stops in front of the gym.', url: 'https://gym.test/locations', title: 'Gym', score: 0.8, section: 'Gym › Eastside' };
    expect(composeAnswer('Is there a bus stop at the gym?', [eastside])?.text).not.toMatch(/^No\b/);
    expect(composeAnswer('Is there a parking lot at the gym?', [eastside])?.text).toMatch(/^No, street parking only/);
    // What it limits is no "No" to itself, where the sentence meets all that is asked.
    expect(composeAnswer('Is there parking at Eastside?', [eastside])?.text).toMatch(/^Yes, street parking only/);
    const cash: Passage = { text: 'At the market stall we accept only cash.', url: 'https://bakery.test/market', title: 'Bakery', score: 0.8, section: 'Bakery › Market' };
    expect(composeAnswer('Do you accept cash at the market stall?', [cash])?.text).toMatch(/^Yes, at the market stall we accept only cash/);
    // Nor is a negation's own word a word of the question ("alone" has "only" among its synonyms): "only" is a stop word.
    const parties: Passage = { text: 'Parties are held on Saturdays at Riverside only.', url: 'https://gym.test/parties', title: 'Cedar Climbing', score: 0.8, section: 'Climbing › Parties' };
    expect(composeAnswer('Can I climb alone?', [parties])).toBeNull();
    // What "only" limits: what follows it ("you pay only your share"), or what an "only" ending its part follows; not a
    // compound's first word ("a bouldering-only gym with a fitness area").
    const share: Passage = { text: 'You pay only your share at the visit.', url: 'https://clinic.test/insurance', title: 'Clinic', score: 0.8, section: 'Clinic › Insurance' };
    expect(composeAnswer('Can I pay by card at the visit?', [share])?.text ?? '').not.toMatch(/^No\b/);
    const fitness: Passage = { text: 'Eastside is a bouldering-only gym with a training board and a fitness area.', url: 'https://gym.test/locations', title: 'Gym', score: 0.9, section: 'Gym › Eastside' };
    expect(composeAnswer('Does Eastside have a fitness area?', [fitness])?.text).toMatch(/^Yes, Eastside is a bouldering-only gym/);
  });

  it('a negation about other names denies nothing asked about one ("Is Guardian accepted?" / "We do not accept BadgerCare")', () => {
    const insurance: Passage = {
      text: 'We are in network with Delta Dental, Cigna, MetLife and Guardian. We do not accept BadgerCare Plus or other Medicaid plans.',
      url: 'https://clinic.test/insurance', title: 'Clinic', score: 0.8, section: 'Clinic › Dental insurance',
    };
    expect(composeAnswer('Is Guardian insurance accepted?', [insurance])?.text).toBe('Yes, we are in network with Delta Dental, Cigna, MetLife and Guardian.');
    // A name with a capital inside is one ("MetLife").
    expect(composeAnswer('Is MetLife accepted?', [insurance])?.text).toBe('Yes, we are in network with Delta Dental, Cigna, MetLife and Guardian.');
    expect(composeAnswer('Do you accept BadgerCare?', [insurance])?.text).toBe('No, we do not accept BadgerCare Plus or other Medicaid plans.');
  });

  it('an FAQ answer\'s own "Yes, " or "No, " is left out of a reply to a question that is no yes/no one', () => {
    const faq: Passage = { text: 'Yes, Dr. Ruiz sees children from age one at the West office.', url: 'https://clinic.test/faq', title: 'Clinic', score: 0.8, section: 'Clinic › FAQ' };
    expect(composeAnswer('At which office does Dr. Ruiz see children?', [faq])?.text).toBe('Dr. Ruiz sees children from age one at the West office.');
    expect(composeAnswer('Do you see children?', [faq])?.text).toBe('Yes, Dr. Ruiz sees children from age one at the West office.');
  });

  it('"How can I reach you?" gets a number and an address, the general ones rather than a line labelled for something else', () => {
    const contact: Passage = {
      text: 'Email hello@bakery.example; we reply within two business days. Catering: catering@bakery.example or (207) 555-0148. Call either café at (207) 555-0112 during opening hours.',
      url: 'https://bakery.test/contact', title: 'Bakery', score: 0.8, section: 'Bakery › Contact',
    };
    expect(composeAnswer('How can I reach you?', [contact])?.text).toBe('Email hello@bakery.example; we reply within two business days. Call either café at (207) 555-0112 during opening hours.');
  });

  it('says which name of two words the site does not mention, as the question writes it', () => {
    const payment: Passage = { text: 'We accept cash, all major credit and debit cards.', url: 'https://clinic.test/payment', title: 'Clinic', score: 0.8, section: 'Clinic › Payment' };
    expect(composeAnswer('Do you accept Apple Pay?', [payment])?.text).toBe("Our site doesn't mention Apple Pay. We accept cash, all major credit and debit cards.");
  });

  it('a shop asked for where there is none: every street address of the page, though the best sentence gives only the town', () => {
    const offices: Passage[] = [
      { text: 'Both offices are in Madison, Wisconsin, and share one patient record.', url: 'https://clinic.test/offices', title: 'Clinic', score: 0.8, section: 'Our offices' },
      { text: '215 State Street, Suite 300, Madison, WI 53703.', url: 'https://clinic.test/offices', title: 'Clinic', score: 0.8, section: 'Our offices › Downtown' },
      { text: '7010 Mineral Point Road, Madison, WI 53717.', url: 'https://clinic.test/offices', title: 'Clinic', score: 0.8, section: 'Our offices › West' },
    ];
    expect(composeAnswer('Do you have an office in Milwaukee?', offices)?.text).toMatch(/^Our site doesn't mention Milwaukee\. (Downtown: 215 State Street.*West: 7010|West: 7010.*Downtown: 215 State Street)/);
  });

  it('someone to talk to, found without a number or an address, is named in full from the heading', () => {
    const team: Passage = { text: 'Marcus makes our laminated pastries and designs the custom cakes.', url: 'https://bakery.test/team', title: 'Bakery', score: 0.8, section: 'Our people › Marcus Bell, Pastry Chef' };
    expect(composeAnswer('Who do I talk to about a custom cake?', [team])?.text).toBe('Marcus Bell, Pastry Chef: Marcus makes our laminated pastries and designs the custom cakes.');
  });

  it('an FAQ answer\'s yes or no is not given for another name than asked; a name met elsewhere gets the heading\'s', () => {
    const faq: Passage = { text: 'Yes, Dr. Ruiz sees children from age one at the West office.', url: 'https://clinic.test/faq', title: 'Clinic', score: 0.8, section: 'Clinic › FAQ' };
    const downtown: Passage = { text: 'Dr. Park works at the Downtown office.', url: 'https://clinic.test/team', title: 'Clinic', score: 0.8, section: 'Clinic › Team' };
    expect(composeAnswer('Does Dr. Ruiz see children at the Downtown office?', [faq, downtown])?.text).toBe('Dr. Ruiz sees children from age one at the West office.');
    expect(composeAnswer('Does Dr. Ruiz see children at the Downtown office?', [faq])?.text).toBe("Our site doesn't mention Downtown. Dr. Ruiz sees children from age one at the West office.");
    expect(composeAnswer('Does Dr. Ruiz see children at the West office?', [faq])?.text).toBe('Yes, Dr. Ruiz sees children from age one at the West office.');
    const offices: Passage[] = [
      { text: 'Park in the Capitol Square ramp across the street.', url: 'https://clinic.test/offices', title: 'Clinic', score: 0.8, section: 'Our offices › Downtown' },
      { text: 'The West office has a bus stop in front.', url: 'https://clinic.test/offices', title: 'Clinic', score: 0.8, section: 'Our offices › West' },
    ];
    expect(composeAnswer('Does the West office have parking?', offices)?.text).toBe('Downtown: Park in the Capitol Square ramp across the street.');
  });

  it('a precise verb denied is another act than the precise one asked about ("share" / "We do not refund … punch cards")', () => {
    // As retrieval gives it: the sentence found, with its score.
    const refunds: Passage = { text: 'We do not refund day passes or punch cards.', answer: 'We do not refund day passes or punch cards.', url: 'https://gym.test/policies', title: 'Gym', score: 0.8, section: 'Gym › Refunds' };
    expect(composeAnswer('Can I share my punch card?', [refunds])?.text).toBe('We do not refund day passes or punch cards.');
    expect(composeAnswer('Can I get a refund on a punch card?', [refunds])?.text).toMatch(/^No, we do not refund/);
    // A vague verb denied ("take", 44 senses) still denies what it is said of.
    const payment: Passage = { text: 'We do not take personal checks.', url: 'https://clinic.test/payment', title: 'Clinic', score: 0.8, section: 'Clinic › Payment' };
    expect(composeAnswer('Can I pay with a check?', [payment])?.text).toBe('No, we do not take personal checks.');
  });

  it('a class denied denies its members ("Do you serve beer?" / "We do not serve alcohol"), and only what the negation is said of', () => {
    const drinks: Passage[] = [
      { text: 'We pour kombucha on tap and fresh orange juice. We do not serve alcohol.', url: 'https://bakery.test/drinks', title: 'Bakery', section: 'Bakery › Drinks', score: 0.8 },
      { text: 'Orders that are not collected by closing time are donated to a local food pantry.', url: 'https://bakery.test/pickup', title: 'Bakery', section: 'Bakery › Pickup', score: 0.8 },
      { text: 'We sell coffee and snacks at the counter.', url: 'https://bakery.test/faq', title: 'Bakery', section: 'Bakery › FAQ', score: 0.8 },
    ];
    expect(composeAnswer('Do you serve beer?', drinks)?.text).toBe('No, we do not serve alcohol.');
    expect(composeAnswer('Can I order a cocktail?', drinks)?.text).toBe('No, we do not serve alcohol.');
    // Cider is a beverage and a beverage a food, but what is not collected is no food denied.
    expect(composeAnswer('Do you serve cider?', drinks)).toBeNull();
    // A class given says nothing of a member: selling coffee is no "yes" to an espresso.
    expect(composeAnswer('Do you sell espresso?', drinks)).toBeNull();
    // Classes of things only: a teenager is a person, and "personal" no denial of one; a night is a period, and "no waiting
    // period" no denial of one.
    const clinic: Passage[] = [
      { text: 'We do not take personal checks.', url: 'https://clinic.test/payment', title: 'Clinic', section: 'Payment', score: 0.8 },
      { text: 'The plan starts the day you sign up; there is no waiting period.', url: 'https://clinic.test/plan', title: 'Clinic', section: 'Savings plan', score: 0.8 },
      { text: 'We do not whiten teeth for patients under 16.', url: 'https://clinic.test/whitening', title: 'Clinic', section: 'Whitening', score: 0.8 },
    ];
    expect(composeAnswer('Do you do whitening for teenagers?', clinic)?.text).toBe('No, we do not whiten teeth for patients under 16.');
    expect(composeAnswer('Can I book at night?', clinic)).toBeNull();
  });

  it('where to do something is answered by a place on the premises rather than the street address', () => {
    const riverside: Passage[] = [
      { text: '120 Mill Street, Portland, OR 97214. Free parking in the lot behind the building.', url: 'https://gym.test/locations', title: 'Gym', section: 'Locations › Riverside', score: 0.8 },
      { text: 'Riverside has our tallest walls and the yoga studio.', url: 'https://gym.test/locations', title: 'Gym', section: 'Locations › Riverside', score: 0.8 },
      { text: 'Every climber must sign our online waiver before the first visit.', url: 'https://gym.test/waiver', title: 'Gym', section: 'Gym › Waiver', score: 0.8 },
      { text: 'Guests must sign the waiver too.', url: 'https://gym.test/guests', title: 'Gym', section: 'Gym › Guests', score: 0.8 },
    ];
    expect(composeAnswer('Where can I park at Riverside?', riverside)?.text).toBe('Free parking in the lot behind the building.');
    // To park is to leave a vehicle: "my car" asks nothing more.
    expect(composeAnswer('Where can I park my car at Riverside?', riverside)?.text).toBe('Free parking in the lot behind the building.');
    expect(composeAnswer('Where do I sign the waiver?', riverside)?.text).toBe('Every climber must sign our online waiver before the first visit.');
    // Where the business is, is still its street address.
    expect(composeAnswer('Where is Riverside?', riverside)?.text).toMatch(/^120 Mill Street/);
  });

  it('a person\'s name is no name of the site\'s for a question\'s word ("Where do I park?" / "Dr. Helen Park")', () => {
    const downtown: Passage[] = [
      { text: '215 State Street, Madison, WI 53703. Park in the Capitol Square ramp across the street.', url: 'https://clinic.test/offices', title: 'Clinic', section: 'Our offices › Downtown', score: 0.8 },
      { text: 'Implants are placed by Dr. Helen Park at the Downtown office.', url: 'https://clinic.test/implants', title: 'Clinic', section: 'Clinic › Implants', score: 0.8 },
      { text: 'Dr. Helen Park opened the practice in 2009.', url: 'https://clinic.test/about', title: 'Clinic', section: 'Clinic › About', score: 0.8 },
    ];
    expect(composeAnswer('Where do I park downtown?', downtown)?.text).toBe('Park in the Capitol Square ramp across the street.');
  });

  it('a question asked without something is answered by what the site says for those without it ("No insurance? Our plan…")', () => {
    const passages: Passage[] = [
      { text: 'Fees for patients with insurance depend on your plan.', url: 'https://clinic.test/fees', title: 'Clinic', section: 'Fees for patients without insurance', score: 0.8 },
      { text: 'Rachel handles billing and insurance questions.', url: 'https://clinic.test/team', title: 'Clinic', section: 'Our team › Rachel Burke, Office Manager', score: 0.8 },
      { text: 'No insurance? Our in-house plan costs $299 a year for adults and $199 a year for children.', url: 'https://clinic.test/savings-plan', title: 'Clinic', section: 'Savings plan', score: 0.8 },
    ];
    expect(composeAnswer("What if I don't have insurance?", passages)?.text).toBe('Our in-house plan costs $299 a year for adults and $199 a year for children.');
  });

  it('a role with an accent is a role ("Café Manager"); a count is no phone number, and a customer\'s quote comes after the business\'s word', () => {
    const team: Passage = { text: 'Priya runs the Back Cove café.', url: 'https://bakery.test/team', title: 'Bakery', section: 'Our people › Priya Shah, Café Manager', score: 0.8 };
    expect(composeAnswer('Who runs the Back Cove café?', [team])?.text).toBe('Priya Shah, Café Manager: Priya runs the Back Cove café.');
    const catering: Passage[] = [
      { text: 'Catering: catering@bakery.example or (207) 555-0148.', url: 'https://bakery.test/contact', title: 'Bakery', section: 'Contact', score: 0.8 },
      { text: '"They catered our 60-person retreat and it came to about $900." — Greg, Saco', url: 'https://bakery.test/reviews', title: 'Bakery', section: 'Kind words', score: 0.8 },
      { text: 'We cater office breakfasts, working lunches and events for 10 to 200 guests.', url: 'https://bakery.test/catering', title: 'Bakery', section: 'Catering', score: 0.8 },
    ];
    expect(composeAnswer('How many people can you cater for?', catering)?.text).toBe('We cater office breakfasts, working lunches and events for 10 to 200 guests.');
  });

  it('"How early should I arrive?" asks how long before; "What time do you open?", with no subject, the hours page\'s times', () => {
    const clinic: Passage[] = [
      { text: 'Please bring a photo ID and your insurance card.', url: 'https://clinic.test/new-patients', title: 'Clinic', section: 'New patients', score: 0.8 },
      { text: 'Fill in the health history form online before your visit, and arrive 15 minutes early.', url: 'https://clinic.test/new-patients', title: 'Clinic', section: 'New patients', score: 0.8 },
      { text: 'Broken tooth? Call before 10 am and we will see you the same day.', url: 'https://clinic.test/emergencies', title: 'Clinic', section: 'Emergencies', score: 0.8 },
      { text: 'The West office is open on Saturday mornings. We are closed on Sundays.', url: 'https://clinic.test/faq', title: 'Clinic', section: 'FAQ', score: 0.8 },
      { text: 'Monday to Thursday — Downtown: 7:30 am – 6 pm; West: 8 am – 5 pm\nSunday — Downtown: Closed; West: Closed', url: 'https://clinic.test/hours', title: 'Clinic', section: 'Office hours', score: 0.8 },
    ];
    expect(composeAnswer('How early should I arrive?', clinic)?.text).toBe('Fill in the health history form online before your visit, and arrive 15 minutes early.');
    expect(composeAnswer('What time do you open?', clinic)?.text).toMatch(/^Monday to Thursday — Downtown: 7:30 am – 6 pm/);
  });

  it('the young asked about by any name are met by what is said for the young ("babies" / "children", "teenagers" / "ages 10 to 17")', () => {
    const clinic: Passage[] = [
      { text: 'Call before 10 am and we will see you the same day.', url: 'https://clinic.test/emergencies', title: 'Clinic', section: 'Emergencies', score: 0.8 },
      { text: 'Dr. Sam Ruiz, our pediatric dentist, sees children from their first birthday to age 16.', url: 'https://clinic.test/children', title: 'Clinic', section: "Children's dentistry", score: 0.8 },
    ];
    expect(composeAnswer('Do you see babies?', clinic)?.text).toMatch(/sees children from their first birthday/);
    const gym: Passage[] = [
      { text: 'We host team-building events for groups of 10 to 40 people.', url: 'https://gym.test/corporate', title: 'Gym', section: 'Team building', score: 0.8 },
      { text: 'For ages 10 to 17. Practice is on Tuesdays and Thursdays.', url: 'https://gym.test/youth', title: 'Gym', section: 'Youth programs › Youth Climbing Team', score: 0.8 },
    ];
    expect(composeAnswer('Do you have a climbing team for teenagers?', gym)?.text).toMatch(/For ages 10 to 17/);
  });

  it('"pick up" is a site\'s pickup, and what is not picked up is what is not collected', () => {
    const bakery: Passage[] = [
      { text: 'Pre-orders are ready from 8 am at the café you chose when ordering. Orders that are not collected by closing time are donated to a local food pantry.', url: 'https://bakery.test/policies/pickup', title: 'Pickup', section: 'Pre-order pickup', score: 0.8 },
      { text: 'Order custom cakes at least 72 hours before you need them.', url: 'https://bakery.test/cakes', title: 'Cakes', section: 'Custom cakes', score: 0.8 },
      { text: 'Vegan choices: the country sourdough, the baguette and the morning glory muffin.', url: 'https://bakery.test/allergens', title: 'Allergens', section: 'Allergens', score: 0.8 },
    ];
    expect(composeAnswer('When can I pick up my order?', bakery)?.text).toBe('Pre-orders are ready from 8 am at the café you chose when ordering.');
    expect(composeAnswer("What if I don't pick it up?", bakery)?.text).toBe('Orders that are not collected by closing time are donated to a local food pantry.');
  });

  it('"…, is that a problem?" asks whether what was said is allowed, and is about nothing of its own ("boulder problems")', () => {
    const gym: Passage[] = [
      { text: 'Over 200 boulder problems and 90 rope routes.', url: 'https://gym.test/', title: 'Gym', section: 'Why climb here', score: 0.8 },
      { text: 'No, you do not need any experience. Take the intro class or climb on your own.', url: 'https://gym.test/faq', title: 'Gym', section: 'FAQ › Do I need climbing experience?', score: 0.8 },
    ];
    // The FAQ entry on what was asked answers whole (its question holds "climb"), without its own "No" to its own question.
    expect(composeAnswer("I've never climbed before, is that a problem?", gym)?.text).toBe('You do not need any experience. Take the intro class or climb on your own.');
  });

  it('a heading\'s title-case role is defined as its words are ("Catering Manager": catering is "providing food and services")', () => {
    const bakery: Passage[] = [
      { text: 'Luis plans office orders and events from first call to delivery.', url: 'https://bakery.test/team', title: 'Bakery', section: 'Our people › Luis Ortega, Catering Manager', score: 0.8 },
      { text: 'Marcus makes our laminated pastries and designs the custom cakes.', url: 'https://bakery.test/team', title: 'Bakery', section: 'Our people › Marcus Bell, Pastry Chef', score: 0.8 },
      { text: 'Catering for offices and events', url: 'https://bakery.test/', title: 'Bakery', section: 'What we make', score: 0.8 },
      ...['Both cafés are closed on Thanksgiving.', 'Our wheat is grown in Aroostook County.', 'Oat milk is 75 cents extra.', 'Free parking behind the building.', 'Dogs are welcome on the patio.', 'A class costs $85.',
        'Orders not collected are donated to a local food pantry.', 'Email hello@bakery.example; we reply within two days.']
        .map((text) => ({ text, url: 'https://bakery.test/more', title: 'Bakery', section: 'More', score: 0.8 })),
    ];
    expect(composeAnswer('Who should I talk to about food for a company event?', bakery)?.text).toBe('Luis Ortega, Catering Manager: Luis plans office orders and events from first call to delivery.');
  });

  it('what a visitor buys, the business sells', () => {
    const faq: Passage = { text: 'Yes, a jar of sourdough starter is $6 at either counter.', url: 'https://bakery.test/faq', title: 'Bakery', section: 'FAQ › Do you sell your starter?', score: 0.8 };
    const blog: Passage = { text: 'Buy whole beans and grind them just before brewing.', url: 'https://bakery.test/blog/coffee', title: 'Bakery', section: 'Journal › Coffee', score: 0.8 };
    expect(composeAnswer('Can I buy your starter?', [faq, blog])?.text).toBe('Yes, a jar of sourdough starter is $6 at either counter.');
  });

  it('answers for everyone before what is said for the young only, and gives that neither a yes nor a no', () => {
    const whitening: Passage = {
      text: 'We do not whiten teeth for patients under 16. In-office whitening takes one visit of about 90 minutes.',
      url: 'https://clinic.test/whitening', title: 'Clinic', score: 0.8, section: 'Clinic › Teeth whitening',
    };
    expect(composeAnswer('Do you do teeth whitening?', [whitening])?.text).toBe('Yes, in-office whitening takes one visit of about 90 minutes.');
    const young: Passage = { text: 'We do not whiten teeth for patients under 16.', url: 'https://clinic.test/whitening', title: 'Clinic', score: 0.8, section: 'Clinic › Teeth whitening' };
    expect(composeAnswer('Do you do teeth whitening?', [young])?.text).toBe('We do not whiten teeth for patients under 16.');
    expect(composeAnswer('Can my son get his teeth whitened?', [young])?.text).toMatch(/^No, we do not whiten teeth/);
  });

  it('says it does not know and offers a person when one can take over; "yes" hands off', async () => {
    const c = chat(agentWith({ can_transfer: true }), { passages: [HOURS] });
    await c.start();
    const turn = await c.say('Do you have parking for visitors?');
    expect(turn.text).toContain("I don't know");
    expect(turn.text).toContain('Would you like me to connect you with someone from our team?');
    expect(turn.toolCalls.map((t) => t.name)).toEqual(['search_knowledge']);
    const next = await c.say('yes please');
    expect(next.text).toMatch(/connecting you with a member of our team/);
  });

  it('without a transfer, offers to take contact details (asking for the email field when there is one)', async () => {
    const bare = chat(agentWith(), { passages: [] });
    expect((await bare.say('Do you sell gift cards?')).text)
      .toBe("I'm sorry, I don't know the answer to that. If you leave your contact details, our team will get back to you.");
    const withEmail = chat(agentWith({ data_schema: [{ name: 'email', type: 'email', description: null, required: true }] }), { passages: [] });
    const turn = await withEmail.say('Do you sell gift cards?');
    expect(turn.text).toContain("I don't know");
    expect(turn.text).toContain('Could you share your email address?');
    expect((await withEmail.say('sure, it is Jane.Doe@Example.com')).captured).toEqual({ email: 'jane.doe@example.com' });
  });

  it('asking for a person without a transfer says so and asks for contact details', async () => {
    const c = chat(agentWith({ data_schema: [{ name: 'phone', type: 'phone', description: null, required: false }] }));
    const turn = await c.say('Can I talk to a human?');
    expect(turn.text).toContain('no one from our team is available');
    expect(turn.text).toContain('Could you share your phone number?');
    expect(turn.toolCalls).toEqual([]);
  });
});

describe('guardrails', () => {
  it('declines what a guardrail forbids, citing it, without searching', async () => {
    const c = chat(agentWith({ guardrails: ['Always be polite.', 'Never quote prices.'], can_transfer: true }), { passages: [HOURS] });
    const turn = await c.say('How much does it cost per month?');
    expect(turn.text).toContain('Our policy: "Never quote prices."');
    expect(turn.text).toContain('would you like me to connect you?');
    expect(c.tools.searchKnowledge).not.toHaveBeenCalled();
    expect(turn.toolCalls).toEqual([]);
  });

  it('matches by topic synonyms or by the rule subject, and lets other questions through', () => {
    const rules = ['Never discuss competitors', 'Do not give legal advice', "Never talk about the CEO's salary"];
    expect(guardrailHit(rules, 'Are you better than your rivals?')?.rule).toBe('Never discuss competitors');
    expect(guardrailHit(rules, 'Can I sue my landlord?')?.rule).toBe('Do not give legal advice');
    expect(guardrailHit(rules, 'What is the salary of the CEO?')?.rule).toBe("Never talk about the CEO's salary");
    expect(guardrailHit(rules, 'Who is the CEO?')).toBeNull();
    expect(guardrailHit(['Never quote prices'], 'Quels sont vos tarifs ?')?.rule).toBe('Never quote prices');
    expect(guardrailHit(['Always answer in a friendly tone about prices'], 'What are your prices?')).toBeNull();
  });

  it('still answers a question no guardrail covers', async () => {
    const c = chat(agentWith({ guardrails: ['Never quote prices.'] }), { passages: [HOURS] });
    expect((await c.say('When are you open?')).text).toContain('Source: https://acme.test/hours');
  });
});

describe('data capture', () => {
  const schema: DataField[] = [
    { name: 'email', type: 'email', description: "The visitor's work email address", required: true },
    { name: 'phone', type: 'phone', description: null, required: true },
    { name: 'team_size', type: 'number', description: 'Number of employees', required: true },
    { name: 'demo_date', type: 'date', description: 'Preferred date for the demo', required: true },
    { name: 'existing_customer', type: 'boolean', description: 'Whether the visitor is an existing customer', required: true },
    { name: 'company', type: 'string', description: 'Company name', required: true },
    { name: 'notes', type: 'string', description: null, required: false },
  ];

  it('asks for each required field in turn, captures it and records capture_data', async () => {
    const c = chat(agentWith({ data_schema: schema, goals: ['Book a demo'] }), { passages: [HOURS] });
    await c.start();
    let turn = await c.say('What are your opening hours?');
    expect(turn.text).toContain('Source: https://acme.test/hours');
    expect(turn.text).toContain('I can also help you book a demo. Could you share your work email address?');

    turn = await c.say('Jane@Acme.io');
    expect(turn.toolCalls).toEqual([{ name: 'capture_data', args: { field: 'email', value: 'jane@acme.io' }, ts: NOW.toISOString() }]);
    expect(turn.text).toBe("Thanks, I've noted your work email address. Could you share your phone number?");

    turn = await c.say('(415) 555-2671');
    expect(turn.toolCalls[0]?.args).toEqual({ field: 'phone', value: '+14155552671' });
    expect(turn.text).toContain('Could you share your number of employees?');

    turn = await c.say('about 1,200 people');
    expect(turn.captured.team_size).toBe(1200);
    expect(turn.text).toContain('Could you share your preferred date for the demo?');

    turn = await c.say('next Thursday works');
    expect(turn.captured.demo_date).toBe('2026-03-05');
    expect(turn.text).toContain('Could you tell me whether you are an existing customer?');

    turn = await c.say('no, not yet');
    expect(turn.captured.existing_customer).toBe(false);
    expect(turn.text).toContain('Could you share your company name?');

    turn = await c.say('My company is Acme Robotics.');
    expect(turn.captured.company).toBe('Acme Robotics');
    expect(turn.text).toBe("Thanks, I've noted your company name. Is there anything else I can help you with?");
    expect(c.captured).toEqual({
      email: 'jane@acme.io', phone: '+14155552671', team_size: 1200, demo_date: '2026-03-05', existing_customer: false, company: 'Acme Robotics',
    });
  });

  it('re-asks for an unreadable value, skips a declined one, and never asks more than twice', async () => {
    const c = chat(agentWith({ data_schema: schema.slice(0, 2) }));
    let turn = await c.say('I want to book a demo');
    expect(turn.text).toBe("I'd be happy to help with that. Could you share your work email address?");
    turn = await c.say('jane at acme');
    expect(turn.text).toBe("Sorry, I couldn't read that as a valid work email address. Could you share your work email address?");
    expect(turn.toolCalls).toEqual([]);
    turn = await c.say('jane at acme dot io');
    // Asked twice already: move on rather than nag.
    expect(turn.text).not.toContain('work email address?');
    const d = chat(agentWith({ data_schema: schema.slice(0, 2) }));
    await d.say('I want to book a demo');
    turn = await d.say("I'd rather not");
    expect(turn.text).toBe('No problem, we can skip your work email address. Could you share your phone number?');
  });

  it('captures volunteered emails and phone numbers without being asked, reads French numbers in E.164', async () => {
    const frenchSchema: DataField[] = [
      { name: 'email', type: 'email', description: 'Adresse e-mail', required: true },
      { name: 'telephone', type: 'phone', description: null, required: true },
      { name: 'effectif', type: 'number', description: 'Nombre de salariés', required: true },
    ];
    const c = chat(agentWith({ data_schema: frenchSchema, default_language: 'fr' }), { language: 'fr' });
    let turn = await c.say('Vous pouvez me joindre au 06 12 34 56 78 ou par mail : Lea@Exemple.fr');
    expect(turn.captured).toEqual({ telephone: '+33612345678', email: 'lea@exemple.fr' });
    expect(turn.toolCalls.map((t) => t.args)).toEqual([{ field: 'email', value: 'lea@exemple.fr' }, { field: 'telephone', value: '+33612345678' }]);
    expect(turn.text).toBe("Merci, j'ai bien noté votre adresse e-mail et votre numéro de téléphone. Pourriez-vous m'indiquer votre nombre de salariés ?");
    turn = await c.say('environ 1 250');
    expect(turn.captured.effectif).toBe(1250);
    expect(turn.text).toBe("Merci, j'ai bien noté votre nombre de salariés. Puis-je vous aider pour autre chose ?");
  });

  it('parses values robustly', () => {
    expect(parsePhone('+44 20 7946 0958', 'US')).toBe('+442079460958');
    expect(parsePhone('415.555.2671', 'US')).toBe('+14155552671');
    expect(parsePhone('12', 'US')).toBeUndefined();
    expect(parseNumber('10k', 'en')).toBe(10_000);
    expect(parseNumber('3,5 salariés', 'fr')).toBe(3.5);
    expect(parseNumber('1 250', 'fr')).toBe(1250);
    expect(parseNumber('1.250,75', 'fr')).toBe(1250.75);
    expect(parseNumber('twelve', 'en')).toBe(12);
    expect(parseNumber('nothing', 'en')).toBeUndefined();
    expect(parseBoolean('Yep')).toBe(true);
    expect(parseBoolean('oui bien sûr')).toBe(true);
    expect(parseBoolean('not really')).toBe(false);
    expect(parseBoolean('maybe')).toBeUndefined();
    expect(parseDate('2026-04-01', 'en', NOW)).toBe('2026-04-01');
    expect(parseDate('04/01/2026', 'en', NOW)).toBe('2026-04-01');
    expect(parseDate('04/01/2026', 'fr', NOW)).toBe('2026-01-04');
    expect(parseDate('25/12/26', 'en', NOW)).toBe('2026-12-25');
    expect(parseDate('March 14th, 2027', 'en', NOW)).toBe('2027-03-14');
    expect(parseDate('le 1er février', 'fr', NOW)).toBe('2027-02-01');
    expect(parseDate('14 mars', 'fr', NOW)).toBe('2026-03-14');
    expect(parseDate('demain', 'fr', NOW)).toBe('2026-03-03');
    expect(parseDate('next monday', 'en', NOW)).toBe('2026-03-09');
    expect(parseDate('February 30, 2026', 'en', NOW)).toBeUndefined();
  });
});

describe('French pages', () => {
  it('answers, apologises and declines in French', async () => {
    const c = chat(agentWith({ guardrails: ['Ne jamais donner de prix'], can_transfer: true }), { language: 'fr', passages: [HOURS] });
    await c.start();
    expect(c.messages[0]?.text).toBe("Bonjour ! Je suis Ava. Comment puis-je vous aider aujourd'hui ?");
    expect((await c.say('What are your opening hours?')).text).toContain('Source : https://acme.test/hours');
    expect((await c.say('Avez-vous un parking ?')).text)
      .toBe('Je suis désolé, je ne connais pas la réponse à cette question. Souhaitez-vous que je vous mette en relation avec un membre de notre équipe ?');
    expect((await c.say('Combien ça coûte ?')).text).toContain('Notre politique : « Ne jamais donner de prix »');
  });
});

describe('evaluation', () => {
  const msg = (role: TranscriptMessage['role'], text: string, i: number): TranscriptMessage => ({ id: String(i), role, text, ts: NOW.toISOString() });
  const transcript = (...lines: [TranscriptMessage['role'], string][]) => lines.map(([role, text], i) => msg(role, text, i));

  it('judges goals and criteria pass, fail or not_applicable, and extracts data from the transcript', () => {
    const agent = agentWith({
      goals: ['Capture the visitor email', 'Book a demo'],
      acceptance_criteria: ['Greets the visitor', 'Answers questions from the knowledge base', 'Never quotes prices',
        'Offers a transfer when it does not know', 'Transfers to a human when asked', 'Replies in English'],
      data_schema: [{ name: 'email', type: 'email', description: null, required: true }, { name: 'team_size', type: 'number', description: 'Number of employees', required: false }],
    });
    const messages = transcript(
      ['agent', "Hi! I'm Ava. How can I help you today?"],
      ['visitor', 'What are your opening hours?'],
      ['agent', 'Acme is open Monday to Friday from 9am to 6pm.\nSource: https://acme.test/hours Could you share your email address?'],
      ['visitor', 'jane@acme.io, we are 40 employees'],
      ['agent', "Thanks, I've noted your email address."],
    );
    const evaluation = evaluateOffline({ agent, messages, captured: {} }, NOW);
    expect(evaluation.extracted_data).toEqual({ email: 'jane@acme.io', team_size: 40 });
    const verdicts = Object.fromEntries(evaluation.criteria_results.map((r) => [r.criterion, r.verdict]));
    expect(verdicts).toEqual({
      'Capture the visitor email': 'pass',
      'Book a demo': 'not_applicable',
      'Greets the visitor': 'pass',
      'Answers questions from the knowledge base': 'pass',
      'Never quotes prices': 'not_applicable',
      'Offers a transfer when it does not know': 'not_applicable',
      'Transfers to a human when asked': 'not_applicable',
      'Replies in English': 'pass',
    });
    expect(evaluation.criteria_results.every((r) => r.reason.length > 0)).toBe(true);
    expect(evaluation.intent).toBe('general_question');
    expect(evaluation.outcome).toBe('resolved');
  });

  it('fails what was not met: ungrounded answers, a quoted price, a bare "I don\'t know", no email', () => {
    const agent = agentWith({
      goals: ['Capture the visitor email'],
      acceptance_criteria: ['Answers questions accurately', 'Never quotes prices', 'Offers a transfer when it does not know', 'Greets the visitor'],
    });
    const messages = transcript(
      ['visitor', 'How much is the pro plan?'],
      ['agent', 'The pro plan is $49 per month.'],
      ['visitor', 'Do you integrate with Salesforce?'],
      ['agent', "I'm sorry, I don't know."],
    );
    const evaluation = evaluateOffline({ agent, messages, captured: {} }, NOW);
    expect(evaluation.criteria_results.map((r) => r.verdict)).toEqual(['fail', 'fail', 'fail', 'fail', 'fail']);
    expect(evaluation.intent).toBe('pricing_question');
    expect(evaluation.outcome).toBe('unresolved');
  });

  it('passes a refusal of a forbidden topic and an honest "I don\'t know" with an offer', () => {
    const agent = agentWith({ acceptance_criteria: ['Never quotes prices', 'Admits when it does not know and offers a transfer'] });
    const messages = transcript(
      ['visitor', 'What does it cost?'],
      ['agent', 'I\'m sorry, but I can\'t help with that. Our policy: "Never quote prices."'],
      ['visitor', 'Do you have parking?'],
      ['agent', "I'm sorry, I don't know the answer to that. Would you like me to connect you with someone from our team?"],
    );
    const evaluation = evaluateOffline({ agent, messages, captured: {} }, NOW);
    expect(evaluation.criteria_results.map((r) => r.verdict)).toEqual(['pass', 'pass']);
  });

  it('labels intent and outcome', () => {
    const agent = agentWith({ can_transfer: true });
    const evaluate = (...lines: [TranscriptMessage['role'], string][]) => evaluateOffline({ agent, messages: transcript(...lines), captured: {} }, NOW);
    expect(evaluate(['agent', 'Hello!'])).toMatchObject({ intent: 'other', outcome: 'abandoned', criteria_results: [] });
    expect(evaluate(['visitor', 'I want to speak to a human'], ['agent', "Of course. I'm connecting you with a member of our team."]))
      .toMatchObject({ intent: 'contact_request', outcome: 'handoff_requested' });
    expect(evaluate(['visitor', 'Can I book a demo for next week?'], ['agent', 'Sure! Could you share your email?']))
      .toMatchObject({ intent: 'book_demo', outcome: 'unresolved' });
    expect(evaluate(['visitor', 'My invoice export is broken, can you help?'], ['agent', "I'm sorry, I don't know the answer to that."]))
      .toMatchObject({ intent: 'support_request', outcome: 'unresolved' });
    // Grounded, then the same question again: the answer did not resolve it.
    expect(evaluate(
      ['visitor', 'What are your opening hours?'], ['agent', 'We open at 9am. Source: https://acme.test/hours'],
      ['visitor', 'But what are your opening hours on Saturday?'], ['agent', 'We open at 9am. Source: https://acme.test/hours'],
    ).outcome).toBe('unresolved');
  });

  it('evaluates through the runtime interface too', async () => {
    const agent = agentWith({ data_schema: [{ name: 'email', type: 'email', description: null, required: true }] });
    const evaluation = await runtime.evaluate({ agent, messages: transcript(['visitor', 'reach me at bob@x.org']), captured: { email: 'bob@x.org' } });
    expect(evaluation).toMatchObject({ extracted_data: { email: 'bob@x.org' }, outcome: 'unresolved' });
  });
});
