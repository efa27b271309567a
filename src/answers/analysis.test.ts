import { describe, expect, it } from 'vitest';
import { analyzeQuestion, answerType, contactOwner, definedBy, deniedStems, holdsType, namesYoung, personNameWords, preamble, stems, typeStrength, withSpelling, withDayRanges, withoutRelativeClauses, words } from './analysis.ts';
import { ANSWER_THRESHOLD, rankSentences } from './rank.ts';
import { synonyms } from './wordnet.ts';

/** The best sentence `rankSentences` gives for `question`, checked to match `expected` and to score ANSWER_THRESHOLD or more. */
function answers(question: string, chunks: Parameters<typeof rankSentences>[1], expected: Record<string, unknown>) {
  const [best] = rankSentences(question, chunks);
  expect(best, question).toMatchObject(expected);
  expect(best!.score, question).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
  return best!;
}

describe('reading a question', () => {
  it('"who" wants a person as the question\'s word only, not as a relative pronoun', () => {
    expect(answerType('Who started the bakery?')).toBe('person');
    expect(answerType('Do you have anything for people who cannot eat gluten?')).toBeNull();
  });

  it('"email" at the end of a question asks for an address ("What\'s your email?"); "emails" asked about do not', () => {
    expect(answerType("What's your email?")).toBe('email');
    expect(answerType('What is your e-mail address?')).toBe('email');
    expect(answerType('Do you reply to emails?')).toBeNull();
  });

  it('a relative clause after a noun asks nothing: the question stays a yes/no one, and its negation is not the question\'s', () => {
    expect(withoutRelativeClauses('Do you have anything for people who cannot eat gluten?')).toBe('Do you have anything for people?');
    expect(withoutRelativeClauses('Is there a room where kids can play, and a discount for students who bring ID?')).toBe('Is there a room, and a discount for students?');
    // After a verb, the word asks ("tell me where"): kept.
    expect(withoutRelativeClauses('Can you tell me where the shop is?')).toBe('Can you tell me where the shop is?');
    expect(analyzeQuestion('Do you have anything for people who cannot eat gluten?').yesNo).toBe(true);
    expect(analyzeQuestion('Can you tell me where the shop is?').yesNo).toBe(false);
  });

  it('contractions, indefinite pronouns and "cannot" are not terms; a hyphenated word is also one word', () => {
    expect(words("you'll we're I've")).toEqual(['you', 'we', 'i']);
    expect(analyzeQuestion('Is there anything someone who cannot eat gluten can have?').terms.map((t) => t.word)).toEqual(['eat', 'gluten']);
    expect(analyzeQuestion('Do you have anything for people who cannot eat gluten?').terms.map((t) => t.word)).toEqual(['eat', 'gluten']);
    expect(words('free-range eggs')).toEqual(['freerange', 'free', 'range', 'eggs']);
    // Reflexive pronouns, "only" and "never" say nothing of what is asked ("never expires" does not answer "I've never climbed").
    expect(analyzeQuestion('Do you bake everything yourselves?').terms.map((t) => t.word)).toEqual(['bake']);
    expect(analyzeQuestion("Can I climb if I've never climbed before?").terms.map((t) => t.word)).toEqual(['climb']);
  });

  it('the business\'s premises (WordNet: a workplace, facility, building...) and adverbs are incidental, what is asked about is not', () => {
    const incidental = (q: string) => analyzeQuestion(q).terms.filter((t) => t.incidental).map((t) => t.word);
    expect(incidental('Who started the bakery?')).toEqual(['bakery']);
    expect(incidental('Where exactly is the gym?')).toEqual(['exactly', 'gym']);
    expect(incidental('How much is a croissant?')).toEqual([]);
    // compromise gives the adverb with the question mark ("once?"): still the word "once".
    expect(incidental('What does it cost to climb just once?')).toEqual(['once']);
  });

  it('a holiday\'s eve is another day than the holiday; "the latest" asks a time; a direction with "side" names a branch', () => {
    expect(stems(withDayRanges('On Christmas Eve we close at noon.')).has('christma')).toBe(false);
    expect(stems(withDayRanges('Closed on Christmas Day.')).has('christma')).toBe(true);
    expect(analyzeQuestion('Are you open on Christmas Eve?').terms.map((t) => t.word)).toContain('eve');
    expect(answerType("What's the latest I can put in an order?")).toBe('time');
    expect(analyzeQuestion("What's the address of the west side clinic?").terms.map((t) => t.word)).not.toContain('side');
  });

  it('"in charge" asks for a person, not a price; "number for the…" asks for a phone; "quel heure" (misspelt) a time', () => {
    expect(answerType("who's in charge at the millbrook branch")).toBe('person');
    expect(answerType('is there a charge for parking')).toBe('price');
    expect(answerType('number for the dock street clinic')).toBe('phone');
    expect(answerType('samedi la boutique ouvre a quel heure')).toBe('time');
  });

  it('a French question with no question word, ending with its question mark or asked with "est-ce que", is a yes/no one', () => {
    expect(analyzeQuestion('je peux venir avec mon chien ?').yesNo).toBe(true);
    expect(analyzeQuestion('est-ce que vous faites des gâteaux sans gluten').yesNo).toBe(true);
    expect(analyzeQuestion("c'est combien la baguette ?").yesNo).toBe(false);
    expect(analyzeQuestion('vous ouvrez quand ?').yesNo).toBe(false);
    expect(analyzeQuestion('où est la boutique ?').yesNo).toBe(false);
  });

  it('cents are a price', () => {
    expect(holdsType('Oat milk is 75 cents extra.', 'price')).toBe(true);
    expect(holdsType('We have 75 seats.', 'price')).toBe(false);
  });

  it('a domain synonym brings the kind of act WordNet files it under ("found" a business is to "open" it)', () => {
    const started = analyzeQuestion('Who started the bakery?').terms.find((t) => t.word === 'started');
    expect(started?.alternatives.has('open')).toBe(true);
    expect(analyzeQuestion('Do you have a shop in Boston?').terms.find((t) => t.word === 'shop')?.premises).toBe(true);
  });

  it('a superlative limit is read as the minimum or maximum a site states', () => {
    expect(analyzeQuestion("What's the smallest catering order you'll take?").terms.map((t) => t.word)).toContain('minimum');
    expect(analyzeQuestion('How many people is the largest group?').terms.map((t) => t.word)).toContain('maximum');
  });
});

describe('needs, measures and phrasal verbs (issue 39)', () => {
  it('"do I need…", "do I have to…", "is it required", "faut-il" ask whether something is needed; a need told is no such question', () => {
    for (const q of ['Do I need an appointment?', 'do i have to book it ahead', 'does he need bloodwork before his dental', 'Is a deposit required?', 'must i bring my own lock']) {
      expect(answerType(q), q).toBe('requirement');
    }
    expect(answerType('faut il réserver')).toBe('requirement');
    expect(answerType("c'est obligatoire ?")).toBe('requirement');
    expect(answerType('I need to cancel my appointment, will I be charged?')).not.toBe('requirement');
    expect(answerType('Do I need to pay a fee to cancel?')).toBe('price');
    expect(holdsType('No appointment is needed to browse either showroom.', 'requirement')).toBe(true);
    expect(holdsType('Reserving is free and strongly recommended.', 'requirement')).toBe(true);
    expect(holdsType('La réservation est obligatoire.', 'requirement')).toBe(true);
    expect(holdsType('The showroom is in the old bakery building.', 'requirement')).toBe(false);
  });

  it('a need asked is answered by the sentence that says whether it is needed, not by one that only shares its words', () => {
    const chunks = [
      { text: 'We moved into the old bakery building in 2016, kept the brick walls, and filled it with faucets, vanities, tubs and a wall of toilets you can actually sit on.', url: '/about', title: 'Plumbing', section: 'Plumbing › Our showroom' },
      { text: 'No appointment is needed to browse either showroom. Both showrooms are open six days a week.', url: '/locations', title: 'Plumbing', section: 'Plumbing › Locations' },
      { text: 'Book an appointment online or call us.', url: '/book', title: 'Plumbing', section: 'Plumbing › Book' },
    ];
    expect(rankSentences('do i need an appointment just to look at toilets in the showroom', chunks)[0]).toMatchObject({ url: '/locations' });
  });

  it('a measure asked ("how tall", "dimensions", "quel diamètre") wants a number with its unit, not any number', () => {
    expect(answerType('how tall are the roll up doors')).toBe('measure');
    expect(answerType('what are the inside dimensions of the van')).toBe('measure');
    expect(answerType('le fraisier il fait quel diamètre')).toBe('measure');
    expect(holdsType('Doors are 7 ft tall.', 'measure')).toBe(true);
    expect(holdsType('A 10x15 unit fits a two-bedroom home.', 'measure')).toBe(true);
    expect(holdsType('Our walls are 16 metres high.', 'measure')).toBe(true);
    expect(holdsType('She built 60 drive-up units.', 'measure')).toBe(false);
    const chunks = [{ text: 'She built 60 drive-up units and painted every door herself.', url: '/about', title: 'Storage', section: 'About' }];
    const [best] = rankSentences('how tall are the doors on the drive up units', chunks);
    expect(best!.score).toBeLessThan(ANSWER_THRESHOLD);
  });

  it('"ahead" is what a site asks for "in advance"; the row labelled with the item asked is its own line before a sentence mentioning it', () => {
    const chunks = [
      { text: 'The 15 ft truck is yours free for up to 4 hours on move-in day; you only pay mileage at $0.89 per mile.', url: '/trucks', title: 'Storage', section: 'Storage › Free move-in truck' },
      { text: '10 ft truck — Day rate: $29.95; Per mile: $0.79\n15 ft truck — Pick up at: Kettle Creek; Day rate (24 hours): $39.95; Per mile: $0.89; Good for: 1–2 bedroom home\n20 ft truck — Day rate: $49.95; Per mile: $0.99', url: '/trucks', title: 'Storage', section: 'Storage › Vehicles' },
      { text: 'One free truck use per new rental; it has to be reserved in advance like any other truck.', url: '/kettle', title: 'Storage', section: 'Storage › Kettle Creek' },
      { text: 'Trucks are cleaned after every rental.', url: '/faq', title: 'Storage', section: 'Storage › FAQ' },
    ];
    expect(rankSentences('how much is the 15 foot truck', chunks)[0]!.sentence).toMatch(/^15 ft truck — .*\$39\.95/);
    const [ahead] = rankSentences('do i have to book the truck ahead', chunks);
    expect(ahead).toMatchObject({ url: '/kettle' });
    expect(ahead!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
  });

  it('a name of words no dictionary knows, opening the sentence before its verb, is who does it ("Who makes the pasta?")', () => {
    expect(holdsType('Nonna Bertolini still makes the pasta by hand every morning.', 'person')).toBe(true);
    expect(holdsType('Ines Okoro runs the front desk.', 'person')).toBe(true);
    // Words of the language are no name of a person ("Riverside Storage offers…"), nor is one word, nor a day.
    expect(holdsType('Riverside Storage offers drive-up units.', 'person')).toBe(false);
    expect(holdsType('Fresh Pasta makes every dish better.', 'person')).toBe(false);
  });

  it('checks are a means of payment where money is paid with them, not "parasite checks and treatment"', () => {
    expect(holdsType('Parasite checks and treatment (mites, lice, fleas, worms)', 'payment')).toBe(false);
    expect(holdsType('We accept cash, checks and all major cards.', 'payment')).toBe(true);
    expect(holdsType('Checks are accepted at both shops.', 'payment')).toBe(true);
    expect(holdsType('We do not accept personal checks.', 'payment')).toBe(true);
  });

  it('a phrase the site defines a name by ("Bordetella — the kennel cough vaccine") is met where that name is', () => {
    const chunks = [
      { text: 'Bordetella — the "kennel cough" vaccine, usually required by boarding kennels and daycares.\nCanine influenza — a vaccine for dogs in group settings.', url: '/vaccines', title: 'Vet', section: 'Vet › Lifestyle vaccines' },
      { text: 'DHPP (dogs) — Price: $38; Where: Both\nBordetella (dogs) — Price: $30; Where: Both\nFVRCP (cats) — Price: $36; Where: Both', url: '/pricing', title: 'Vet', section: 'Vet › Price list' },
      { text: 'We see dogs, cats and small pets at both clinics.', url: '/', title: 'Vet', section: 'Vet' },
    ];
    const ranked = rankSentences('price of kennel cough shot', chunks, undefined, 10);
    expect(ranked[0]).toMatchObject({ url: '/pricing', sentence: expect.stringMatching(/^Bordetella \(dogs\)/) });
    // Met as a synonym is: well before the other vaccines' rows.
    const other = ranked.find((r) => r.sentence.startsWith('DHPP'));
    expect(ranked[0]!.score).toBeGreaterThan(2 * (other?.score ?? 0));
  });

  it('a noun read as an adverb before another noun names a kind of it ("well pumps"); "still open" keeps its adverb', () => {
    expect(analyzeQuestion('do you fix well pumps').terms.find((t) => t.word === 'well')).toMatchObject({ incidental: false });
    expect(analyzeQuestion('is it still open on sunday').terms.find((t) => t.word === 'still')).toMatchObject({ incidental: true });
  });

  it('a verb\'s particle after its object is the same verb ("pick her up"); "not using" is what a site calls unused; "end up" says nothing', () => {
    expect(analyzeQuestion('when can i pick her up').terms.map((t) => t.word)).toEqual(['pickup']);
    expect(analyzeQuestion('can i pick my dog up at 5').terms.map((t) => t.word)).toContain('pickup');
    const using = analyzeQuestion('can i bring back the ones i end up not using').terms;
    expect(using.map((t) => t.word)).not.toContain('end');
    expect([...using.find((t) => t.word === 'using')!.derived]).toContain(stems('unused').values().next().value);
    const chunks = [
      { text: 'Bring back unused boxes within 60 days with your receipt for a full refund.', url: '/supplies', title: 'Storage', section: 'Returns' },
      { text: 'Saturdays at the end of the month go fast.', url: '/blog/checklist', title: 'Storage', section: 'Blog' },
      { text: 'Pack the rooms you use least first.', url: '/blog/tips', title: 'Storage', section: 'Blog' },
    ];
    expect(rankSentences('can i bring back the boxes i end up not using', chunks)[0]).toMatchObject({ url: '/supplies' });
  });
});

describe('ranking sentences', () => {
  const chunk = (text: string, url: string) => ({ text, url, title: 'Bakery', section: null });

  it('a word\'s family Porter2 stems apart ("allergy" / "allergens") finds the sentence, as a synonym would', () => {
    const chunks = [chunk('Every label lists the allergens.', '/labels'), chunk('Every label lists the price.', '/prices'), chunk('We bake daily.', '/about')];
    const [best] = rankSentences('What about my allergy?', chunks);
    expect(best).toMatchObject({ sentence: 'Every label lists the allergens.' });
    expect(best!.score).toBeGreaterThan(0.5);
    expect(rankSentences('What about my allergy?', chunks.slice(1)).every((r) => r.score === 0)).toBe(true);
  });

  it('a word whose WordNet definition names the question\'s word ("amalgam": "…(usually silver)…") relates them, weakly', () => {
    expect(definedBy('Do you use amalgam fillings?').has('silver')).toBe(true);
    // Not a name's definition ("Bell": "a hollow device…that makes a ringing sound"), nor a vague word's ("class": 9 senses).
    expect(definedBy('Marcus Bell bakes.').has('make')).toBe(false);
    expect(definedBy('class').size).toBe(0);
    const chunks = [
      { text: 'No, all our fillings are tooth-colored composite.', url: '/faq', title: 'FAQ', section: 'FAQ › Do you use amalgam fillings?' },
      chunk('Tooth-colored filling: from $160', '/fees'),
      chunk('Fill in the health history form before your visit.', '/new-patients'),
      ...['We open at 8 am on weekdays.', 'Parking is free behind the building.', 'Cleanings are due twice a year.'].map((t) => chunk(t, '/about')),
    ];
    const [best] = rankSentences('Do you do silver fillings?', chunks);
    expect(best).toMatchObject({ sentence: 'No, all our fillings are tooth-colored composite.' });
    expect(best!.score).toBeGreaterThan(ANSWER_THRESHOLD);
  });

  it('a negation in a relative clause ("people who cannot…") does not prefer a negated sentence; one in the question does', () => {
    const chunks = [
      chunk('Our kitchen uses wheat, so we cannot promise any item is free of gluten.', '/allergens'),
      chunk('Gluten-free brownies are baked on Fridays.', '/menu'),
    ];
    expect(rankSentences('Do you have anything for people who cannot eat gluten?', chunks)[0]).toMatchObject({ sentence: 'Gluten-free brownies are baked on Fridays.' });
    expect(rankSentences('Why can you not promise anything is gluten-free?', chunks)[0]).toMatchObject({ url: '/allergens' });
  });

  it('a phrase the site writes under a short heading ("first consultation" on "New pets") is met, weakly, by that heading\'s words', () => {
    const chunks = [
      { text: 'Your first consultation takes 30 minutes, with a full health check.', url: '/new-pets', title: 'Vet', section: 'New pets' },
      ...['New pet exam: $70', 'Nail trim: $15', 'Dental cleaning: $250'].map((text) => ({ text, url: '/fees', title: 'Vet', section: 'Fees › Fees without pet insurance' })),
      ...['We open at 8 am on weekdays.', 'Parking is free behind the building.'].map((t) => chunk(t, '/about')),
    ];
    const [best] = rankSentences('Without insurance, what would a first consultation cost?', chunks);
    expect(best).toMatchObject({ sentence: 'New pet exam: $70' });
    expect(best!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    // Without the page that says what a first consultation is here, the fee rows meet only "insurance" and "cost".
    expect(rankSentences('Without insurance, what would a first consultation cost?', chunks.slice(1))[0]!.score).toBeLessThan(ANSWER_THRESHOLD);
  });

  it('a contact asked for by what it is for ("grooming", "reception") is the one whose label or address names it', () => {
    expect([...contactOwner('Grooming: grooming@petpals.example or (555) 010-2000.')]).toEqual(['groom']);
    expect([...contactOwner('Email frontdesk@petpals.example; we answer within a day.')]).toEqual(['front', 'desk']);
    const contact = (text: string) => ({ text, url: '/contact', title: 'Pet Pals', section: 'Contact us' });
    const chunks = [
      contact('Email frontdesk@petpals.example; we answer within a day.'),
      contact('Grooming: grooming@petpals.example or (555) 010-2000.'),
      contact('For lab results, write to lab@petpals.example.'),
      ...['Grooming takes about two hours.', 'We open at 8 am on weekdays.', 'Parking is free behind the building.'].map((t) => chunk(t, '/about')),
    ];
    // "handles … appointments" only says what the address is for, which its line never spells out.
    const [grooming] = rankSentences('Which email address handles grooming appointments?', chunks);
    expect(grooming).toMatchObject({ sentence: 'Grooming: grooming@petpals.example or (555) 010-2000.' });
    expect(grooming!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    // WordNet's "reception desk": the desk of "frontdesk@".
    const [reception] = rankSentences('What email address can I use to reach reception?', chunks);
    expect(reception).toMatchObject({ sentence: 'Email frontdesk@petpals.example; we answer within a day.' });
    expect(reception!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    // With nothing said of what it is for, the general address; a purpose no line names is not answered.
    expect(rankSentences('What is your email address?', chunks)[0]).toMatchObject({ sentence: 'Email frontdesk@petpals.example; we answer within a day.' });
    expect(rankSentences('Which email address handles press requests?', chunks)[0]!.score).toBeLessThan(ANSWER_THRESHOLD);
  });

  it('a sentence for children answers a question about a child ("my son", "my 8-year-old"), not one that names none', () => {
    const chunks = [
      { text: 'Bring your child for a first visit by age one.', url: '/children', title: 'Clinic', section: "Children's dentistry" },
      { text: 'For your first visit, please bring a photo ID and your insurance card.', url: '/new-patients', title: 'Clinic', section: 'New patients' },
      { text: 'Weekly day camps cost $325 per week.', url: '/youth', title: 'Gym', section: 'Youth programs › Summer camps' },
      { text: 'A day pass costs $22.', url: '/pricing', title: 'Gym', section: 'Pricing' },
    ];
    expect(rankSentences('What do I bring to my first visit?', chunks)[0]).toMatchObject({ url: '/new-patients' });
    expect(rankSentences('What do I bring to my son\'s first visit?', chunks)[0]).toMatchObject({ url: '/children' });
    // Its order only, not its score: on a site for children alone, what it says for them still answers.
    const swimming = [
      { text: 'Swim lessons for toddlers run on Saturday mornings.', url: '/lessons', title: 'Little Fins', section: 'Lessons for kids' },
      { text: 'Our teachers hold a lifeguard certificate.', url: '/team', title: 'Little Fins', section: 'Our team' },
    ];
    const [lessons] = rankSentences('When do the morning swim lessons start?', swimming);
    expect(lessons).toMatchObject({ url: '/lessons' });
    expect(lessons!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    expect(analyzeQuestion('Is there a camp for my 8-year-old?').forChild).toBe(true);
    expect(analyzeQuestion('Can my daughter climb?').forChild).toBe(true);
    expect(analyzeQuestion('How much is a pass?').forChild).toBe(false);
    // "children" is the plural WordNet lists under "child", which its data alone does not say.
    expect(namesYoung('Children\'s dentistry')).toBe(true);
    expect(namesYoung('Parties for up to 12 climbers')).toBe(false);
    // An age limit or range for the young says so too; one for adults, or a number of people or minutes, does not.
    expect(namesYoung('We do not whiten teeth for patients under 16.')).toBe(true);
    expect(namesYoung('For ages 10 to 17.')).toBe(true);
    expect(namesYoung('Members under 30 pay less.')).toBe(false);
    expect(namesYoung('Groups under 12 people need no deposit.')).toBe(false);
  });

  it('a number inside a range the sentence gives is met ("for 45 people?" / "events for 10 to 200 guests"), not one outside it', () => {
    const chunks = [
      chunk('We cater office breakfasts, working lunches and events for 10 to 200 guests.', '/catering'),
      chunk('10-inch round — Serves: 25 to 30; Price: $95', '/cakes'),
      chunk('8-inch round — Serves: 14 to 18; Price: $68', '/cakes'),
      chunk('We bake sourdough every morning.', '/about'),
    ];
    const [lunch] = rankSentences('Can you cater a lunch for 45 people?', chunks);
    expect(lunch).toMatchObject({ url: '/catering' });
    expect(lunch!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    expect(rankSentences('Which cake serves 28 people?', chunks)[0]).toMatchObject({ sentence: '10-inch round — Serves: 25 to 30; Price: $95' });
    expect(rankSentences('Can you cater a lunch for 450 people?', chunks)[0]!.score).toBeLessThan(lunch!.score);
  });

  it('a number is met by a number of its kind: people by a count, not by a price ("for 500 people?" / "orders over $500")', () => {
    const chunks = [{
      text: 'We cater office lunches and events for 10 to 200 guests. Delivery costs $25, and is free on orders over $500. Our catering manager plans every order with you.',
      url: '/catering', title: 'Bakery', section: 'Catering',
    }];
    const [many] = rankSentences('Can you cater for 500 people?', chunks);
    expect(many).toMatchObject({ sentence: 'We cater office lunches and events for 10 to 200 guests.' });
    expect(rankSentences('Is delivery free on orders over $500?', chunks)[0]).toMatchObject({ sentence: 'Delivery costs $25, and is free on orders over $500.' });
    // "1,000" and "$1,150" are one number each.
    expect(words('$1,150 for 1,000 guests, 25-30')).toEqual(['1150', 'for', '1000', 'guests', '2530', '25', '30']);
    expect(analyzeQuestion('Can you cater for 500 people?').terms.find((t) => t.word === '500')?.money).toBe(false);
    expect(analyzeQuestion('Is delivery free over $500?').terms.find((t) => t.word === '500')?.money).toBe(true);
  });

  it('a lead asked for ("how far out", "how much notice") is answered by a limit said as a lead, not by how long a visit takes', () => {
    const chunks = [
      { text: 'Your first visit takes about 60 minutes: a consultation, a cut and a color plan. Please bring photos of styles you like.', url: '/new-clients', title: 'Salon', section: 'New clients' },
      { text: 'We text you a reminder one day before your visit. You can book up to eight weeks ahead.', url: '/booking', title: 'Salon', section: 'Book an appointment' },
      { text: 'Please give us at least 24 hours\' notice to cancel an appointment.', url: '/policies', title: 'Salon', section: 'Cancellations' },
    ];
    // An idiom of price: "set me back" is what it costs.
    expect(analyzeQuestion('What would a latte set me back?').want).toBe('price');
    expect(analyzeQuestion('Where can I park?').whereTo).toBe(true);
    expect(analyzeQuestion('Where are you located?').whereTo).toBe(false);
    expect(analyzeQuestion('Where can I find you?').whereTo).toBe(false);
    // An object a verb's definition implies says nothing more ("park": "maneuver a vehicle into a parking space"); not one after "for".
    expect(analyzeQuestion('Where can I park my car?').terms.find((t) => t.word === 'car')?.incidental).toBe(true);
    expect(analyzeQuestion('Can I pay for treatment in monthly instalments?').terms.find((t) => t.word === 'treatment')?.incidental).toBe(false);
    expect([...(analyzeQuestion('Do you serve beer?').terms.find((t) => t.word === 'beer')?.classes ?? [])]).toContain('alcohol');
    expect(analyzeQuestion('How far out can I schedule a visit?').lead).toBe(true);
    expect(analyzeQuestion('How long does a first visit take?').lead).toBe(false);
    expect(rankSentences('How far out can I schedule a visit?', chunks)[0]).toMatchObject({ sentence: 'You can book up to eight weeks ahead.' });
    expect(rankSentences('How much notice do you need if I cancel?', chunks)[0]).toMatchObject({ url: '/policies' });
    // A deadline is a limit said as a lead: "by noon, two business days before your event".
    const lead = (sentence: string) => rankSentences('How much notice for catering?', [
      { text: `${sentence} Orders cancelled with less than 48 hours' notice are charged in full.`, url: '/ordering', title: 'Bakery', section: 'How to order catering' },
      { text: 'We bake bread every morning.', url: '/', title: 'Bakery', section: 'Home' },
    ]).find((r) => r.sentence === sentence)!.score;
    expect(lead('Place catering orders by noon, two business days before your event.')).toBeCloseTo(lead('Place catering orders at least two business days before your event.'), 6);
    // How long a visit takes is still what a question about its length gets.
    expect(rankSentences('How long does a first visit take?', chunks)[0]).toMatchObject({ url: '/new-clients' });
  });

  it('a person\'s name is no common word: "Dr. Helen Park" does not answer "Is there parking?", and still answers "Dr. Park"', () => {
    expect(personNameWords('Implants are placed by Dr. Helen Park. Call Grace Hill or Marcus Bell, Pastry Chef.')).toEqual(['helen', 'park', 'grace', 'hill', 'marcus', 'bell']);
    // Not a place, and not a lone first name.
    expect(personNameWords('The Rose Garden is next to Hope Street. Marcus bakes.')).toEqual([]);
    const chunks = [
      { text: 'Yes, implants are placed by Dr. Helen Park at the Downtown office.', url: '/implants', title: 'Clinic', section: 'Implants' },
      { text: 'Park in the ramp across the street; we validate tickets for two hours.', url: '/offices', title: 'Clinic', section: 'Downtown office' },
    ];
    expect(rankSentences('Is there parking at the downtown office?', chunks)[0]).toMatchObject({ url: '/offices' });
    expect(rankSentences('Does Dr. Park place implants?', chunks)[0]).toMatchObject({ url: '/implants' });
    // A title is no word of the question, and its full stop ends no sentence: "Park" is a name.
    expect(analyzeQuestion('Who is Dr. Park?').terms).toMatchObject([{ word: 'park', proper: true }]);
    expect(rankSentences('Who is Dr. Park?', chunks)[0]).toMatchObject({ url: '/implants' });
  });

  it('"how often" wants a frequency: "every six months", "twice a year", "on Tuesdays", not "monthly memberships"', () => {
    expect(answerType('How often should I get a cleaning?')).toBe('frequency');
    expect(answerType('How many times a week does the team train?')).toBe('frequency');
    for (const yes of ['We recommend a checkup every six months.', 'Filters are changed twice a year.', 'We bake daily.', 'Practice is on Tuesdays and Thursdays.', 'Classes run on Monday, Wednesday and Friday at 7 am.']) expect(holdsType(yes, 'frequency')).toBe(true);
    for (const no of ['Yoga is included with monthly memberships.', 'A cleaning takes about 45 minutes.', 'Closed on Monday.']) expect(holdsType(no, 'frequency')).toBe(false);
    const chunks = [
      { text: 'A routine cleaning takes about 45 minutes. We recommend a checkup and cleaning every six months.', url: '/cleanings', title: 'Clinic', section: 'Cleanings' },
      { text: 'Cleanings are included with the yearly plan.', url: '/plan', title: 'Clinic', section: 'Savings plan' },
    ];
    expect(rankSentences('How often should I get a cleaning?', chunks)[0]).toMatchObject({ sentence: 'We recommend a checkup and cleaning every six months.' });
  });

  it('"When did … open?" asks for a date, not opening hours', () => {
    expect(answerType('When did the Back Cove café open?')).toBe('date');
    expect(answerType('What year was the practice founded?')).toBe('date');
    expect(answerType('When do you open on Sundays?')).not.toBe('date');
    // The hours: "When are you open?", "What are your weekday hours?"; "on weekdays" is met by the days a site names.
    expect(answerType('When are you open?')).toBe('time');
    expect(answerType('What are your weekday hours?')).toBe('time');
    // A day named with something else done on it asks about that, not the hours.
    expect(answerType('Is the café open on Mondays?')).toBe('time');
    expect(answerType('Can I come in on a Saturday?')).toBe('time');
    expect(answerType('Do you deliver on Sundays?')).toBeNull();
    expect(analyzeQuestion('Do you open before 7 on weekdays?').terms.find((t) => t.word === 'weekdays')?.synonymWords).toEqual(expect.arrayContaining(['monday', 'friday']));
    const chunks = [
      { text: 'Sunday — Old Port: 8 am – 2 pm; Back Cove: 8 am – 2 pm', url: '/hours', title: 'Bakery', section: 'Opening hours' },
      { text: 'Our first café opened in Old Port in 2014. The Back Cove café followed in 2019.', url: '/story', title: 'Bakery', section: 'Our story' },
    ];
    expect(rankSentences('When did the Back Cove café open?', chunks)[0]).toMatchObject({ sentence: 'The Back Cove café followed in 2019.' });
  });

  it('"non-members" are no members; "I\'m not a member" is a non-member; "a café" asked for is not the business itself', () => {
    expect(words('Non-members pay $15.')).toEqual(['nonmembers', 'pay', '15']);
    expect(analyzeQuestion("I'm not a member, what would a yoga class cost me?").terms.map((t) => t.word)).toContain('nonmember');
    const chunks = [
      { text: 'Members pay nothing for yoga. Non-members pay $15 per class.', url: '/yoga', title: 'Yoga | Cedar Climbing', section: 'Yoga' },
      { text: 'Cedar Climbing is a bouldering gym in Portland.', url: '/', title: 'Home | Cedar Climbing', section: null },
      { text: 'We sell snacks and coffee at the front desk.', url: '/faq', title: 'FAQ | Cedar Climbing', section: 'Food' },
    ];
    expect(rankSentences("I'm not a member, what would a yoga class cost me?", chunks)[0]).toMatchObject({ sentence: 'Non-members pay $15 per class.' });
    expect(analyzeQuestion('Do you have a café?').terms[0]).toMatchObject({ premises: true, incidental: false });
    expect(analyzeQuestion('Where is the café?').terms[0]).toMatchObject({ premises: true, incidental: true });
    expect(rankSentences('Do you have a café?', chunks)[0]?.sentence ?? '').not.toMatch(/bouldering gym/);
  });

  it('"How do I…?" wants a way to do it ("online", "by phone", a command), and "How do I get to…?" an address', () => {
    expect(answerType('How do I book an appointment?')).toBe('method');
    expect(answerType('How do I get to Riverside?')).toBe('address');
    expect(answerType('Who should I call after hours?')).toBe('phone');
    // A name compromise does not know, then a role WordNet files under people, is a person.
    expect(holdsType('Priya Nair, Youth Programs Director', 'person')).toBe(true);
    expect(holdsType('Old Port, Portland', 'person')).toBe(false);
    expect(answerType("What's the number for emergencies?")).toBe('phone');
    expect(typeStrength('Book online at any hour, or call the front desk.', 'method')).toBe(1);
    expect(typeStrength('Book at least two weeks in advance.', 'method')).toBe(0.8);
    expect(typeStrength('After three missed appointments we may ask for a deposit to book.', 'method')).toBe(0);
    const chunks = [
      { text: 'After three missed appointments we may ask you to pay a deposit to book an appointment.', url: '/cancellation', title: 'Clinic', section: 'Cancellation policy' },
      { text: 'Book online at any hour, or call the front desk during office hours.', url: '/booking', title: 'Clinic', section: 'Book an appointment' },
    ];
    expect(rankSentences('How do I book an appointment?', chunks)[0]).toMatchObject({ url: '/booking' });
  });

  it('premises asked for in a place are not tied to it by a post that names both ("a gym in Denver?")', () => {
    const chunks = [
      { text: 'Both of our gyms are in Portland, Oregon.', url: '/locations', title: 'Locations | Cedar Climbing', section: 'Our locations' },
      { text: 'Maya spent a week climbing in Denver this spring. She visited four gyms there.', url: '/blog/denver', title: 'Climbing in Denver | Cedar Climbing', section: 'A week in Denver' },
    ];
    expect(rankSentences('Do you have a gym in Denver?', chunks)[0]).toMatchObject({ url: '/locations', missing: ['denver'] });
    // A question about the post's own subject still finds it.
    expect(rankSentences('Did Maya climb in Denver?', chunks)[0]).toMatchObject({ url: '/blog/denver', missing: [] });
    // Nor by other premises there ("at a hotel in Boston"), nor a customer's quoted word; any other sentence naming the town does.
    const bakery = [
      { text: 'Nadia Brooks opened Hearth & Crumb in 2014 after eight years as a pastry chef at a hotel in Boston.', url: '/about', title: 'Our story', section: 'Our story' },
      { text: '"I drive up from Boston once a month just for the morning buns." — Tom, Boston', url: '/reviews', title: 'Reviews', section: 'Reviews' },
      { text: 'We have two cafés: Old Port and Back Cove.', url: '/', title: 'Home', section: 'Home' },
      { text: 'Old Port: 41 Wharf Street, Portland, ME 04101.', url: '/locations', title: 'Locations', section: 'Locations' },
    ];
    expect(rankSentences('Do you have a café in Boston?', bakery)[0]).toMatchObject({ missing: ['boston'] });
    expect(rankSentences('Do you have a shop in Portland?', bakery)[0]).toMatchObject({ url: '/locations', missing: [] });
    // A town named otherwise, without a street, is not where the premises are.
    expect(rankSentences('Is there a location in Boston?', [...bakery, { text: 'Tom guided in Boston for ten years.', url: '/team', title: 'Team', section: 'Team' }])[0])
      .toMatchObject({ missing: ['boston'] });
    // The business's own premises there are.
    expect(rankSentences('Do you have a café in Boston?', [...bakery, { text: 'Our newest café in Boston opened in May.', url: '/news', title: 'News', section: 'News' }])[0])
      .toMatchObject({ missing: [] });
  });

  it('a count or an age is a number that is no price; "what kind of" asks which, "kind" is no word of it', () => {
    expect(answerType('What age do you stop seeing children?')).toBe('number');
    expect(answerType('How tall are the walls?')).toBe('measure');
    expect(holdsType('New patient exam with X-rays: $149', 'number')).toBe(false);
    expect(holdsType('We care for about 5,000 patients and charge $50.', 'number')).toBe(true);
    const chunks = [
      { text: 'New patient exam with X-rays: $149', url: '/fees', title: 'Clinic', section: 'Fees' },
      { text: 'Today three dentists care for about 5,000 patients.', url: '/about', title: 'Clinic', section: 'About' },
      { text: 'Fill in the health history form online before your visit.', url: '/new-patients', title: 'Clinic', section: 'New patients' },
      { text: 'All our fillings are tooth-colored composite.', url: '/faq', title: 'Clinic', section: 'FAQ' },
    ];
    expect(rankSentences('How many patients do you have?', chunks)[0]).toMatchObject({ url: '/about' });
    expect(analyzeQuestion('What kind of fillings do you use?').terms.map((t) => t.word)).toEqual(['fillings', 'use']);
    expect(rankSentences('What kind of fillings do you use?', chunks)[0]).toMatchObject({ url: '/faq' });
  });

  it('"when" is answered by a lead ("three months before the wedding"), "who" by a firm after a passive verb', () => {
    expect(holdsType('A tasting is booked at least three months before the wedding date.', 'when')).toBe(true);
    expect(holdsType('A tasting takes three hours.', 'when')).toBe(false);
    expect(holdsType('Our coffee is roasted for us by Hillside Roasters in Biddeford.', 'person')).toBe(true);
    expect(holdsType('Orders are ready by Christmas Eve.', 'person')).toBe(false);
    const chunks = [
      { text: 'Wedding cakes start with a tasting, booked at least three months before the wedding date.', url: '/cakes', title: 'Bakery', section: 'Wedding cakes' },
      { text: 'Our coffee is roasted for us by Hillside Roasters in Biddeford.', url: '/about', title: 'Bakery', section: 'Ingredients' },
      { text: 'Drip coffee: $3', url: '/menu', title: 'Bakery', section: 'Menu' },
    ];
    expect(rankSentences('When do I book a wedding cake tasting?', chunks)[0]!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    expect(rankSentences('Who roasts your coffee?', chunks)[0]!.score).toBeGreaterThan(ANSWER_THRESHOLD);
  });

  it('"your pastry chef" is the one the site calls "our pastry chef", not one who was a pastry chef elsewhere', () => {
    const chunks = [
      { text: 'Nadia was a pastry chef at a hotel.', url: '/about', title: 'Bakery', section: 'Our story' },
      { text: 'Marcus Bell, our pastry chef, laminates every croissant by hand with French butter over three days.', url: '/pastries', title: 'Bakery', section: 'Pastries' },
    ];
    expect(rankSentences('Who is your pastry chef?', chunks)[0]).toMatchObject({ url: '/pastries' });
  });

  it('"How do I reach…?" wants a phone number or an email address, the one for what is named', () => {
    expect(answerType('How do I reach catering?')).toBe('contact');
    expect(answerType('How do I get in touch about memberships?')).toBe('contact');
    expect(answerType('How do I book a class?')).toBe('method');
    const chunks = [{ text: 'Call either café at (207) 555-0112. Email hello@bakery.example. Catering: catering@bakery.example or (207) 555-0148.', url: '/contact', title: 'Bakery', section: 'Contact' },
      { text: 'Catering for offices and events.', url: '/', title: 'Bakery', section: 'What we make' }];
    expect(rankSentences('How do I reach catering?', chunks)[0]).toMatchObject({ sentence: 'Catering: catering@bakery.example or (207) 555-0148.' });
  });

  it('a name the sentence before gives is what the sentence goes on about ("How much is Invisalign?")', () => {
    const chunks = [
      { text: 'Dr. Osei straightens teeth with Invisalign clear aligners. Treatment lasts 12 to 18 months for most adults and starts at $4,800.', url: '/aligners', title: 'Clinic', section: 'Clear aligners' },
      { text: 'A porcelain crown costs $1,150.', url: '/fees', title: 'Clinic', section: 'Fees' },
    ];
    const [best] = rankSentences('How much is Invisalign?', chunks);
    expect(best).toMatchObject({ sentence: 'Treatment lasts 12 to 18 months for most adults and starts at $4,800.' });
    expect(best!.score).toBeGreaterThan(ANSWER_THRESHOLD);
  });

  it('a name of two words is one name ("Apple Pay"), and what the site says without other names comes first', () => {
    const chunks = [
      { text: 'We do not accept BadgerCare Plus or other Medicaid plans.', url: '/insurance', title: 'Clinic', section: 'Insurance' },
      { text: 'We accept cash, all major credit and debit cards, and HSA cards.', url: '/payment', title: 'Clinic', section: 'Payment' },
      { text: 'You pay only your share at the visit.', url: '/insurance', title: 'Clinic', section: 'Insurance' },
    ];
    const [best] = rankSentences('Do you accept Apple Pay?', chunks);
    expect(best).toMatchObject({ url: '/payment', missing: ['apple', 'pay'], absent: ['apple', 'pay'] });
  });

  it('a limit said in words is a minimum or maximum ("at least $100", "limited to 8 people"), "4 years old" an age', () => {
    const chunks = [
      { text: 'Wholesale accounts need a standing order of at least $100 a week.', url: '/wholesale', title: 'Bakery', section: 'Wholesale' },
      { text: 'Children must be at least 4 years old to climb.', url: '/youth', title: 'Gym', section: 'Youth' },
      { text: 'Book at least two weeks in advance.', url: '/parties', title: 'Gym', section: 'Parties' },
      { text: 'A class is limited to 8 people.', url: '/classes', title: 'Bakery', section: 'Classes' },
    ];
    for (const [question, url] of [["What's the minimum for wholesale?", '/wholesale'], ['Is there a minimum age?', '/youth'], ['What is the maximum class size?', '/classes']]) {
      const [best] = rankSentences(question!, chunks);
      expect(best).toMatchObject({ url });
      expect(best!.score).toBeGreaterThan(ANSWER_THRESHOLD);
    }
  });

  it('a day asked for is not answered by a holiday, and neither a day nor a table\'s column label is a name the site gives', () => {
    const chunks = [
      { text: 'Saturday — Old Port: 8 am – 6 pm; Back Cove: 8 am – 4 pm\nSunday — Old Port: 8 am – 2 pm; Back Cove: 8 am – 2 pm', url: '/hours', title: 'Bakery', section: 'Opening hours' },
      { text: 'Both cafés are closed on Thanksgiving and Christmas Day.', url: '/hours', title: 'Bakery', section: 'Opening hours › Holidays' },
      { text: 'Kids decorate cookies on the first Sunday of each month. Cakes are in the case from Thursday to Sunday.', url: '/classes', title: 'Bakery', section: 'Classes' },
      { text: '6-inch round — Serves: 8 to 10; Price: $48\n8-inch round — Serves: 14 to 18; Price: $68\n10-inch round — Serves: 25 to 30; Price: $95\nTwo-tier — Serves: 40 to 50; Price: $210', url: '/cakes', title: 'Bakery', section: 'Custom cakes' },
    ];
    expect(rankSentences('Are both cafes open on Sunday?', chunks)[0]).toMatchObject({ sentence: 'Sunday — Old Port: 8 am – 2 pm; Back Cove: 8 am – 2 pm' });
    expect(rankSentences('Which cake serves 28 people?', chunks)[0]).toMatchObject({ sentence: '10-inch round — Serves: 25 to 30; Price: $95' });
  });

  it('"how much" prefers an amount to "free"; a number is no subject beside other words ("a cake for 20 people?")', () => {
    const chunks = [
      { text: 'Rentals are free on your first visit.', url: '/rentals', title: 'Gym', section: 'Gear rental' },
      { text: 'Day pass — Price: $22; What you get: One visit, all day', url: '/pricing', title: 'Gym', section: 'Pricing' },
      { text: 'We supply about 20 restaurants and shops in southern Maine.', url: '/wholesale', title: 'Bakery', section: 'Wholesale' },
      { text: '8-inch round — Serves: 14 to 18; Price: $68', url: '/cakes', title: 'Bakery', section: 'Custom cakes' },
    ];
    expect(rankSentences('How much for one visit?', chunks)[0]).toMatchObject({ url: '/pricing' });
    expect(rankSentences('How big a cake do I need for 20 people?', chunks)[0]).toMatchObject({ url: '/cakes' });
  });

  it('"how far" wants a distance, "who do I talk to" a way to reach someone (or a person), "after hours" is outside them', () => {
    expect(answerType('How far do you deliver?')).toBe('number');
    expect(answerType('Who do I talk to about wholesale?')).toBe('contact');
    expect(typeStrength('Write to wholesale@bakery.example.', 'contact')).toBe(1);
    expect(typeStrength('Marcus Bell, our pastry chef, designs the custom cakes.', 'contact')).toBe(0.6);
    expect(analyzeQuestion("What's the after-hours number?").terms.map((t) => t.word)).toEqual(['outside', 'hours', 'number']);
    const chunks = [
      { text: 'Front desk: (608) 555-0173, Monday to Friday during office hours. You can also text that number.', url: '/contact', title: 'Clinic', section: 'Contact' },
      { text: 'Outside office hours, our on-call dentist answers at (608) 555-0199.', url: '/emergencies', title: 'Clinic', section: 'Emergencies' },
      { text: 'Delivery within 10 miles of the café costs $25.', url: '/catering', title: 'Bakery', section: 'Catering' },
    ];
    expect(rankSentences("What's the after hours number?", chunks)[0]).toMatchObject({ url: '/emergencies' });
    expect(rankSentences('How far do you deliver?', chunks)[0]!.score).toBeGreaterThan(ANSWER_THRESHOLD);
  });

  it('whether something may be done frames the question ("Are kids allowed to climb?"); a people\'s name names no thing', () => {
    expect(analyzeQuestion('Are kids allowed to climb?').terms.find((t) => t.word === 'allowed')).toMatchObject({ incidental: true });
    const chunks = [
      { text: 'No, pets are not allowed inside the gyms, except service animals.', url: '/faq', title: 'Gym', section: 'FAQ › Are pets allowed?' },
      { text: 'Children must be at least 4 years old to climb.', url: '/youth', title: 'Gym', section: 'Youth programs' },
      { text: 'Use 60 grams of coffee per litre and brew for four minutes in a French press.', url: '/blog/coffee', title: 'Gym', section: 'Brewing coffee' },
      { text: 'Marcus laminates every croissant by hand with French butter.', url: '/pastries', title: 'Gym', section: 'Pastries' },
    ];
    expect(rankSentences('Are kids allowed to climb?', chunks)[0]).toMatchObject({ url: '/youth' });
    // "the Riverside gym" is found where Riverside is; "French butter" is butter, not whatever "French" is found with.
    expect(analyzeQuestion('Do you use French butter?').terms.find((t) => t.word === 'butter')?.namedBy).toBeUndefined();
    expect(analyzeQuestion('Where is the Riverside gym?').terms.find((t) => t.word === 'gym')?.namedBy).toBe('riversid');
    expect(rankSentences('Do you use French butter?', chunks)[0]).toMatchObject({ url: '/pastries' });
  });

  it('"at no charge" is a price; a range states a minimum and a maximum less plainly than "at least" does', () => {
    expect(holdsType('We slice any loaf on request at no charge.', 'price')).toBe(true);
    const chunks = [
      { text: 'We cater office breakfasts, working lunches and events for 10 to 200 guests.', url: '/catering', title: 'Bakery', section: 'Catering' },
      { text: 'A class is limited to 8 people.', url: '/classes', title: 'Bakery', section: 'Classes' },
      { text: 'For ages 10 to 17.', url: '/youth', title: 'Gym', section: 'Youth team' },
      { text: 'Children must be at least 4 years old to climb.', url: '/youth', title: 'Gym', section: 'Youth programs' },
      { text: 'Call (608) 555-0199 after hours.', url: '/contact', title: 'Gym', section: 'Contact' },
    ];
    expect(rankSentences('What is the largest event you cater?', chunks)[0]).toMatchObject({ url: '/catering' });
    expect(rankSentences('Is there a minimum age?', chunks)[0]).toMatchObject({ sentence: 'Children must be at least 4 years old to climb.' });
    // A phone number is no range.
    expect(stems(withDayRanges('Call (608) 555-0199 or 207-555-0148.')).size).toBe(stems('Call (608) 555-0199 or 207-555-0148.').size);
  });

  it('a sentence that asks ("No insurance?") answers nothing itself', () => {
    const chunks = [{ text: 'No insurance? The plan starts the day you sign up.', url: '/plan', title: 'Clinic', section: 'Savings plan' }];
    expect(rankSentences('Is there a plan for people with no insurance?', chunks)[0]).toMatchObject({ sentence: 'The plan starts the day you sign up.' });
  });

  it('mends slips of typing ("adress", "wich", "membrship"), not names, irregular forms, contractions or compounds', () => {
    expect(withSpelling('whats the adress of the gym, wich days, the monthly membrship')).toBe('what the address of the gym, which days, the monthly membership');
    expect(withSpelling("who is priya? I was seen today, don't pre-order, Osei")).toBe("who is priya? I was seen today, don't pre-order, Osei");
    // French is left as it is ("ouverture" is one edit from English "overture").
    expect(withSpelling("quelle est l'heure d'ouverture du magasin")).toBe("quelle est l'heure d'ouverture du magasin");
    expect(withSpelling('quelle est la date ouverture')).toBe('quelle est la date ouverture');
    expect(analyzeQuestion('whats the adress of the gym').want).toBe('address');
  });

  it('names written in lower case: a place WordNet knows only as a name ("seattle"), a name the site capitalises ("riverside")', () => {
    expect(analyzeQuestion('do you have a gym in seattle').terms.find((t) => t.word === 'seattle')?.proper).toBe(true);
    expect(analyzeQuestion('do you have a gym near the park').terms.find((t) => t.word === 'park')?.proper).toBe(false);
    const chunks = [
      { text: 'Cedar Climbing is a climbing gym with two locations in Portland, Oregon: Riverside and Eastside. Members climb at Riverside or Eastside.', url: '/', title: 'Home | Cedar Climbing', section: 'Home | Cedar Climbing › Climb with us' },
      { text: '120 Mill Street, Portland, OR 97214. Free parking at Riverside.', url: '/locations', title: 'Locations | Cedar Climbing', section: 'Locations | Cedar Climbing › Riverside' },
      { text: '4800 Division Street, Portland, OR 97206.', url: '/locations', title: 'Locations | Cedar Climbing', section: 'Locations | Cedar Climbing › Eastside' },
    ];
    expect(rankSentences('where is riverside gym', chunks)[0]).toMatchObject({ sentence: '120 Mill Street, Portland, OR 97214.' });
  });
  it('a name of two words is one, wherever its words are written ("pay with Apple Pay"), and a vague verb left alone answers nothing', () => {
    const chunks = [
      { text: 'Pay starts at $18 an hour plus tips.', url: '/careers', title: 'Careers', section: 'Careers' },
      { text: "We don't take table reservations; seating is first come, first served.", url: '/faq', title: 'FAQ', section: 'FAQ' },
      { text: 'Bring your own cup and we take 25 cents off any drink.', url: '/loyalty', title: 'Loyalty', section: 'Loyalty' },
    ];
    // The verb "pay" and the name's "Pay" are one term: where the site lacks "Apple", it lacks the name, and "Pay starts…" is no answer.
    const ranked = rankSentences('Can I pay with Apple Pay?', chunks);
    expect(ranked[0]?.missing).toEqual(expect.arrayContaining(['pay', 'apple']));
    expect(ranked.every((r) => r.score < ANSWER_THRESHOLD)).toBe(true);
    // Without the name, "take" (44 senses) is all that is left: "we take 25 cents off" answers nothing.
    expect(rankSentences('Do you take Apple Pay?', chunks).every((r) => r.score < ANSWER_THRESHOLD)).toBe(true);
    // A precise word left is still answered with what the site says ("Do you accept Apple Pay?": the means it accepts).
    const accepts = [...chunks, { text: 'We accept cash, debit and all major credit cards.', url: '/pricing', title: 'Pricing', section: 'Pricing' }];
    expect(rankSentences('Do you accept Apple Pay?', accepts)[0]).toMatchObject({ sentence: 'We accept cash, debit and all major credit cards.', missing: ['apple', 'pay'] });
    // "take" a means of payment the site does not name: the means it accepts, before one it refuses, which meets "take".
    const refuses = [...accepts, { text: 'We do not take personal checks.', url: '/pricing', title: 'Pricing', section: 'Pricing' }];
    expect(rankSentences('Do you take Apple Pay?', refuses)[0]).toMatchObject({ sentence: 'We accept cash, debit and all major credit cards.', missing: ['apple', 'pay'] });
  });

  it('"in charge of" asks for a person, not a charge', () => {
    expect(analyzeQuestion('Who is in charge of the Back Cove location?').want).toBe('person');
    expect(analyzeQuestion('Who is in charge of the Back Cove location?').terms.map((t) => t.word)).not.toContain('charge');
    const chunks = [
      { text: 'Free parking behind the building.', url: '/locations', title: 'Locations', section: 'Locations › Back Cove' },
      { text: 'Priya runs the Back Cove café.', url: '/team', title: 'Our people', section: 'Our people › Priya Shah, Café Manager' },
      { text: 'A late cancellation fee is charged in full.', url: '/policies', title: 'Policies', section: 'Policies' },
    ];
    expect(rankSentences('Who is in charge of the Back Cove location?', chunks)[0]).toMatchObject({ sentence: 'Priya runs the Back Cove café.' });
  });

  it('asks for the means of payment ("What forms of payment do you accept?", "How can I pay?"), not a price', () => {
    for (const q of ['What forms of payment do you accept?', 'What payment do you take?', 'How can I pay?', 'Can I pay by card?', 'Which payment methods are accepted?', 'Which cards do you take?']) {
      expect(answerType(q), q).toBe('payment');
    }
    for (const q of ['How do I pay for a class?', 'How much do I pay for a day pass?', 'Do I pay in advance?']) expect(answerType(q), q).not.toBe('payment');
    const chunks = [
      { text: 'Non-members pay $15 per class.', url: '/yoga', title: 'Yoga', section: 'Yoga' },
      { text: 'We accept cash, debit and all major credit cards.', url: '/pricing', title: 'Pricing', section: 'Pricing › Fees' },
      { text: 'We do not refund day passes or punch cards.', url: '/policy', title: 'Policy', section: 'Policy' },
    ];
    for (const q of ['What payment do you take?', 'How can I pay?', 'Can I pay by card?']) {
      expect(rankSentences(q, chunks)[0], q).toMatchObject({ sentence: 'We accept cash, debit and all major credit cards.' });
    }
    expect(rankSentences('How do I pay for a class?', chunks)[0]).toMatchObject({ sentence: 'Non-members pay $15 per class.' });
    // The means accepted before one refused, which meets "take" word for word.
    const refused = [...chunks, { text: 'We do not take personal checks.', url: '/pricing', title: 'Pricing', section: 'Pricing › Fees' }];
    expect(rankSentences('What forms of payment do you take?', refused)[0]).toMatchObject({ sentence: 'We accept cash, debit and all major credit cards.' });
  });
  it('what a cake feeds, a menu says it serves', () => {
    const chunks = [{
      text: '6-inch round — Serves: 8 to 10; Price: $48\n8-inch round — Serves: 14 to 18; Price: $68\n\nWriting on the cake is free; an edible photo print is $12.',
      url: '/cakes', title: 'Custom cakes', section: 'Custom cakes',
    }];
    const [best] = rankSentences('How much is a cake that feeds 15 people?', chunks);
    expect(best).toMatchObject({ sentence: '8-inch round — Serves: 14 to 18; Price: $68' });
    expect(best!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
  });
  it('"What happens if I forget to…?" asks what follows when it is not done', () => {
    const chunks = [
      { text: 'All our baking happens in one kitchen that uses wheat, tree nuts and dairy.', url: '/allergens', title: 'Allergens', section: 'Allergens' },
      { text: 'Pre-orders are ready from 8 am at the café you chose when ordering. Orders that are not collected by closing time are donated to a local food pantry.', url: '/policies/pickup', title: 'Pickup', section: 'Pre-order pickup' },
    ];
    const [best] = rankSentences('What happens if I forget to pick up my order?', chunks);
    expect(best).toMatchObject({ sentence: 'Orders that are not collected by closing time are donated to a local food pantry.' });
    expect(best!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
  });
  it('a capacity is a number ("big enough for 28"), a measure names no thing ("a cup of coffee"), "brought to the office" is a delivery, "leave my car" is parking', () => {
    const cakes = [{
      text: '8-inch round — Serves: 14 to 18; Price: $68\n10-inch round — Serves: 25 to 30; Price: $95\n\nWriting on the cake is free.',
      url: '/cakes', title: 'Custom cakes', section: 'Custom cakes',
    }];
    const [cake] = rankSentences('How much is a cake big enough for 28 people?', cakes);
    expect(cake).toMatchObject({ sentence: '10-inch round — Serves: 25 to 30; Price: $95' });
    expect(cake!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
    const drinks = [
      { text: 'Bring your own cup and we take 25 cents off any drink.', url: '/loyalty', title: 'Loyalty card', section: 'Loyalty card' },
      { text: 'Drip coffee: $3\nLatte: $5.25', url: '/menu', title: 'Menu', section: 'Everyday menu' },
      { text: 'Our coffee is roasted for us by Hillside Roasters.', url: '/about', title: 'Our story', section: 'Ingredients' },
      { text: 'Use 60 grams of coffee per litre of water.', url: '/blog/coffee', title: 'Brewing better coffee at home', section: 'Brewing' },
    ];
    expect(analyzeQuestion('How much is a cup of coffee?').terms.map((t) => t.word)).toEqual(['coffee']);
    expect(rankSentences('How much is a cup of coffee?', drinks)[0]).toMatchObject({ sentence: 'Drip coffee: $3' });
    const catering = [
      { text: 'We cater office breakfasts and working lunches for 10 to 200 guests.', url: '/catering', title: 'Catering', section: 'Catering' },
      { text: 'Delivery within 10 miles costs $25, and is free on orders over $500.', url: '/catering', title: 'Catering', section: 'Catering › Delivery' },
    ];
    expect(rankSentences('How much is it to have lunch brought to our office?', catering)[0]).toMatchObject({ sentence: 'Delivery within 10 miles costs $25, and is free on orders over $500.' });
    const places = [
      { text: '780 Forest Avenue, Portland, ME 04103. Free parking behind the building.', url: '/locations', title: 'Locations', section: 'Locations › Back Cove' },
    ];
    const [park] = rankSentences('Where can I leave my car?', places);
    expect(park).toMatchObject({ sentence: 'Free parking behind the building.' });
    expect(park!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
  });
  it('reads a visitor\'s ways of saying things: "you guys", "anytime", "in house", and a part of the day as hours', () => {
    const chunks = [
      { text: 'Saturday — Old Port: 8 am – 6 pm\nSunday — Old Port: 8 am – 2 pm', url: '/hours', title: 'Opening hours', section: 'Opening hours' },
      { text: 'We are hiring early-morning bakers (shifts start at 4 am) and weekend baristas.', url: '/careers', title: 'Careers', section: 'Work with us' },
      { text: 'Everything is baked on site every morning. We pour Maine-made kombucha on tap; our espresso is a house blend.', url: '/', title: 'Home', section: 'Home' },
      { text: "You can cancel a monthly membership at any time with 30 days' notice.", url: '/policies', title: 'Policies', section: 'Cancelling' },
    ];
    const [sunday] = rankSentences('hi, are you guys open sunday morning?', chunks);
    expect(sunday).toMatchObject({ sentence: 'Sunday — Old Port: 8 am – 2 pm' });
    expect(sunday!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
    const [cancel] = rankSentences('can i cancel anytime?', chunks);
    expect(cancel).toMatchObject({ sentence: "You can cancel a monthly membership at any time with 30 days' notice." });
    expect(cancel!.score).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
    expect(rankSentences('Are your pastries made in house?', chunks)[0]).toMatchObject({ sentence: 'Everything is baked on site every morning.' });
  });
  it('a part of the day asks for the hours ("Are you open late?", "Can I climb at night?"); "Do you drop off…?" asks for a delivery', () => {
    for (const q of ['Are you open late?', 'Can I climb at night?', 'Can I come in before work?', 'Are you open early on Saturdays?']) expect(answerType(q), q).toBe('time');
    expect(answerType('Do you deliver in the morning?')).not.toBe('time');
    const chunks = [
      { text: 'Monday — Riverside: 6 am – 11 pm\nSunday — Riverside: 8 am – 8 pm', url: '/hours', title: 'Opening hours', section: 'Opening hours' },
      { text: 'Film nights and route-setting workshops are announced on our blog.', url: '/events', title: 'Events', section: 'Events' },
      { text: 'Bring your own cup and we take 25 cents off any drink.', url: '/loyalty', title: 'Loyalty', section: 'Loyalty' },
      { text: 'Delivery within 10 miles costs $25, and is free on orders over $500.', url: '/catering', title: 'Catering', section: 'Catering' },
    ];
    expect(rankSentences('Can I climb at night?', chunks)[0]?.sentence).toMatch(/^(Monday|Sunday) — Riverside/);
    expect(analyzeQuestion('Do you drop off catering orders?').terms.map((t) => t.word)).toEqual(['deliver', 'catering', 'orders']);
    expect(rankSentences('Do you drop off catering orders?', chunks)[0]).toMatchObject({ sentence: 'Delivery within 10 miles costs $25, and is free on orders over $500.' });
  });
  it('an adjective is said by the denial of its opposite ("wrong" / "isn\'t right")', () => {
    expect([...(analyzeQuestion('What if my order is wrong?').terms.find((t) => t.word === 'wrong')?.antonyms ?? [])]).toEqual(['right']);
    const chunks = [
      { text: "If something isn't right, bring it back the same day with your receipt and we will replace it or refund you.", url: '/refunds', title: 'Refunds', section: 'Refunds' },
      { text: 'Cake deposits are refunded in full if you cancel more than 72 hours before pickup.', url: '/refunds', title: 'Refunds', section: 'Refunds › Deposits' },
      { text: 'Custom cakes take 72 hours.', url: '/cakes', title: 'Cakes', section: 'Cakes' },
    ];
    const [best] = rankSentences('Can I get a refund if my cake is wrong?', chunks);
    expect(best).toMatchObject({ sentence: "If something isn't right, bring it back the same day with your receipt and we will replace it or refund you." });
    // Not a sentence that says the opposite without denying it.
    expect(rankSentences('What if my order is wrong?', [{ text: 'We get every order right.', url: '/', title: 'Home', section: 'Home' }])[0]!.score).toBeLessThan(ANSWER_THRESHOLD);
  });
  it('a duration per day or "every two weeks" is a rate, which answers "how long" less surely than a length, unless a rate is asked', () => {
    expect(typeStrength('You wear the aligners about 22 hours a day and switch to a new set every two weeks.', 'duration')).toBe(0.5);
    expect(typeStrength('You wear the aligners about 22 hours a day.', 'duration', true)).toBe(1);
    expect(typeStrength('Treatment lasts 12 to 18 months for most adults.', 'duration')).toBe(1);
    const chunks = [{ text: 'Treatment lasts 12 to 18 months for most adults and starts at $4,800. You wear the aligners about 22 hours a day and switch to a new set every two weeks.', url: '/aligners', title: 'Clear aligners', section: 'Clear aligners' }];
    expect(rankSentences('How long do aligners take?', chunks)[0]).toMatchObject({ sentence: 'Treatment lasts 12 to 18 months for most adults and starts at $4,800.' });
    expect(rankSentences('How long do I wear aligners each day?', chunks)[0]).toMatchObject({ sentence: 'You wear the aligners about 22 hours a day and switch to a new set every two weeks.' });
  });
  it('a "rewards card", a "points scheme" or a "loyalty program" is what a site calls its loyalty card', () => {
    const chunks = [
      { text: 'Ask for a stamp card: every tenth drink is on us.', url: '/loyalty', title: 'Loyalty card', section: 'Loyalty card' },
      { text: 'Confirm by card.', url: '/ordering', title: 'How to order', section: 'How to order' },
    ];
    for (const q of ['Do you have a rewards card?', 'Is there a points scheme?', 'Do you have a loyalty program?']) {
      const [best] = rankSentences(q, chunks);
      expect(best, q).toMatchObject({ sentence: 'Ask for a stamp card: every tenth drink is on us.' });
      expect(best!.score, q).toBeGreaterThanOrEqual(ANSWER_THRESHOLD);
    }
    // A punch card is a pass, not a loyalty card.
    expect(analyzeQuestion('Can I share my punch card?').terms.map((t) => t.word)).toContain('punch');
  });
  it('whether something is safe or suitable frames the question too: the allergy asked about is what the answer says', () => {
    const q = 'Is the bakery safe for someone with a nut allergy?';
    expect(analyzeQuestion(q).terms.find((t) => t.word === 'safe')).toMatchObject({ incidental: true });
    expect(analyzeQuestion('Is the cake suitable for vegans?').terms.find((t) => t.word === 'suitable')).toMatchObject({ incidental: true });
    const chunks = [
      { text: 'All our baking happens in one kitchen that uses wheat, tree nuts, peanuts, eggs and dairy, so we cannot promise any item is free of them. Ask at the counter for the ingredient list of anything we sell.', url: '/allergens', title: 'Allergens | Hearth & Crumb', section: 'Allergens and diets' },
      { text: 'Nadia Brooks opened Hearth & Crumb in 2014. Today the bakery runs two cafés.', url: '/about', title: 'Our story | Hearth & Crumb', section: 'Our story' },
      { text: 'Almond croissant: $5.25. Coffee: $3.', url: '/menu', title: 'Menu | Hearth & Crumb', section: 'Menu' },
      { text: 'Both cafés open at 7 am and close at 3 pm.', url: '/hours', title: 'Hours | Hearth & Crumb', section: 'Hours' },
      { text: 'Free parking behind the building.', url: '/locations', title: 'Locations | Hearth & Crumb', section: 'Locations › Back Cove' },
    ];
    answers(q, chunks, { url: '/allergens', sentence: expect.stringContaining('tree nuts, peanuts') });
  });

  it('"seen", "brought", "teeth": a form English inflects irregularly is its word; "seen today" asks for the same day', () => {
    const seen = analyzeQuestion('Can I be seen today?').terms;
    expect(seen.map((t) => t.word)).toEqual(['seen', 'same', 'day']);
    expect([...seen[0]!.derived]).toContain('see');
    expect(seen[0]!.synonymWords).toContain('see');
    expect([...analyzeQuestion('Do I need to bring my teeth X-rays?').terms.find((t) => t.word === 'teeth')!.derived]).toContain('tooth');
    expect([...analyzeQuestion('Who brought the cake?').terms.find((t) => t.word === 'brought')!.derived]).toContain('bring');
    // "today" alone is the day asked about: "Are you open today?" wants the day's hours.
    expect(analyzeQuestion('Are you open today?').terms.map((t) => t.word)).toContain('today');
    expect(analyzeQuestion('Can you fit me in today?').terms.map((t) => t.word)).toEqual(['fit', 'same', 'day']);
    const chunks = [
      { text: 'Broken tooth, swelling or bad toothache? Call before 10 am and we will see you the same day.', url: '/emergencies', title: 'Dental emergencies', section: 'Dental emergencies' },
      { text: 'Today three dentists and six hygienists care for about 5,000 patients.', url: '/about', title: 'About us', section: 'About us' },
      { text: 'Tooth-colored filling: from $160.', url: '/fees', title: 'Fees', section: 'Fees' },
    ];
    for (const q of ['If I chip a tooth, can I be seen today?', "I've got a really bad toothache, can I be seen today?", 'Can you see my son today?']) {
      answers(q, chunks, { sentence: 'Call before 10 am and we will see you the same day.' });
    }
  });

  it('what a question tells before it asks ("If I chip a tooth, can I…?") leaves it a yes/no question; two asks are no story', () => {
    expect(preamble('If I chip a tooth, can I be seen today?')).toEqual({ told: 'If I chip a tooth', ask: 'can I be seen today?' });
    expect(analyzeQuestion('If I chip a tooth, can I be seen today?').yesNo).toBe(true);
    expect(analyzeQuestion('My plan is out of network, will you still file the claim?').yesNo).toBe(true);
    // An ask that only points back, or a question asked twice, or asked first.
    expect(preamble('My daughter is 14 and wants her teeth whitened, can you do that?')).toBeNull();
    expect(preamble('Is there parking, and is it free?')).toBeNull();
    expect(preamble('For my son, what time do you open?')).toEqual({ told: 'For my son', ask: 'what time do you open?' });
    expect(analyzeQuestion('For my son, what time do you open?').yesNo).toBe(false);
    expect(analyzeQuestion('If I cancel, how much do I get back?').yesNo).toBe(false);
  });
  it('"Who owns…?" asks for the founder, "How big a group…?" a number of people, "the best way to reach…" how to reach', () => {
    expect(analyzeQuestion('Who owns Hearth & Crumb?').terms.map((t) => t.word)).toEqual(['founded', 'hearth', 'crumb']);
    expect(analyzeQuestion('Can I bring my own cup?').terms.map((t) => t.word)).toContain('own');
    expect(analyzeQuestion("What's the best way to reach someone about catering?").want).toBe('contact');
    expect(analyzeQuestion('How big a group can you cater for?').terms.map((t) => t.word)).toEqual(analyzeQuestion('How many people can you cater for?').terms.map((t) => t.word));
    const chunks = [
      { text: 'Nadia Brooks opened Hearth & Crumb in 2014 after eight years as a pastry chef at a hotel in Boston.', url: '/about', title: 'Our story | Hearth & Crumb', section: 'Our story' },
      { text: 'Bring your own cup and we take 25 cents off any drink.', url: '/menu', title: 'Menu | Hearth & Crumb', section: 'Menu › Drinks' },
      { text: '"The best croissant I have had outside Paris." — Anna, Falmouth', url: '/reviews', title: 'Reviews | Hearth & Crumb', section: 'Reviews' },
      { text: 'We cater office breakfasts, working lunches and events for 10 to 200 guests.', url: '/catering', title: 'Catering | Hearth & Crumb', section: 'Catering' },
      { text: 'Catering: catering@hearthandcrumb.example or (207) 555-0148.', url: '/contact', title: 'Contact | Hearth & Crumb', section: 'Contact' },
    ];
    answers('Who owns the bakery?', chunks, { url: '/about' });
    answers('How big a group can you cater for?', chunks, { url: '/catering' });
    answers('What is the largest event you can cater?', chunks, { url: '/catering' });
    answers("What's the best way to reach someone about catering?", chunks, { url: '/contact' });
  });
  it('"What city are you in?" asks where, as a town or a street', () => {
    for (const q of ['What city are your offices in?', 'Which town is the bakery in?', 'Which part of town is the café in?']) expect(answerType(q), q).toBe('address');
    // "area" stays a thing asked about ("Where is the bouldering area?").
    expect(analyzeQuestion('Where is the bouldering area?').terms.find((t) => t.word === 'area')).toMatchObject({ typeWord: false });
    const chunks = [
      { text: 'Brightwater Dental looks after patients of all ages.', url: '/', title: 'Brightwater Dental', section: 'Home' },
      { text: 'Downtown: 215 State Street, Suite 300, Madison, WI 53703.', url: '/offices', title: 'Offices', section: 'Our offices' },
      { text: 'Park in the Capitol Square ramp across the street.', url: '/offices', title: 'Offices', section: 'Our offices › Parking' },
    ];
    answers('What city are your offices in?', chunks, { sentence: 'Downtown: 215 State Street, Suite 300, Madison, WI 53703.' });
  });
  it('"Where do I send questions about my bill?" asks whom to write to, as "How do I reach…?" does', () => {
    expect(answerType('Where do I send questions about my bill?')).toBe('contact');
    expect(answerType('Where do I send my CV?')).toBe('email');
    const chunks = [
      { text: 'For bills and statements, write to billing@brightwater.example.', url: '/contact', title: 'Contact', section: 'Contact' },
      { text: '215 State Street, Suite 300, Madison, WI 53703.', url: '/offices', title: 'Offices', section: 'Offices' },
      { text: 'We send a text reminder two days before your visit.', url: '/booking', title: 'Booking', section: 'Booking' },
    ];
    answers('Where do I send questions about my bill?', chunks, { url: '/contact' });
  });
  it('"Can I bring my dog?" asks whether a dog may come: a rule for pets answers it, and a noun has no verb\'s synonyms', () => {
    const terms = analyzeQuestion('Can I bring my dog along while I climb?').terms;
    expect(terms.map((t) => t.word)).toEqual(['bring', 'dog', 'climb']);
    expect(terms[0]).toMatchObject({ incidental: true });
    expect(terms[1]!.classWords).toContain('pet');
    // Not the verb "to dog" ("follow", "pursue"), nor the acts its group's verbs are ("to pet": "caress").
    for (const verb of ['follow', 'pursue', 'caress', 'chase', 'tail']) expect(terms[1]!.synonymWords).not.toContain(verb);
    // Whichever is asked first: a word's synonyms of all its parts of speech are cached apart from its noun senses'.
    expect(synonyms('dog')).toContain('chase');
    expect(synonyms('dog', 2, ['noun'])).not.toContain('chase');
    // "What should I bring?" asks what to bring.
    expect(analyzeQuestion('What should I bring to my first visit?').terms.find((t) => t.word === 'bring')).toMatchObject({ incidental: false });
    expect([...deniedStems('No, pets are not allowed inside the gyms, except service animals.')]).toContain('pet');
    const gym = [
      { text: 'No, pets are not allowed inside the gyms, except service animals.', url: '/faq', title: 'FAQ', section: 'FAQ › Are pets allowed?' },
      { text: 'The Riverside gym opened first; Eastside followed in 2019.', url: '/about', title: 'About', section: 'About' },
      { text: 'Bring your own lock for the lockers.', url: '/faq', title: 'FAQ', section: 'FAQ › Lockers' },
      { text: 'Children must be at least 4 years old to climb.', url: '/youth', title: 'Youth', section: 'Youth' },
      { text: 'Climb at Riverside or Eastside with one membership.', url: '/pricing', title: 'Pricing', section: 'Pricing' },
      { text: 'Everyone who climbs signs our waiver.', url: '/waiver', title: 'Waiver', section: 'Waiver' },
    ];
    const cafe = [
      { text: 'Dogs are welcome on the Back Cove patio, but not indoors.', url: '/faq', title: 'FAQ', section: 'FAQ' },
      { text: 'Bring your own cup and we take 25 cents off any drink.', url: '/menu', title: 'Menu', section: 'Menu' },
      { text: 'Both cafés open at 7 am.', url: '/hours', title: 'Hours', section: 'Hours' },
    ];
    for (const [q, chunks, sentence] of [
      ['Can I bring my dog along while I climb?', gym, 'No, pets are not allowed inside the gyms, except service animals.'],
      ['Can I bring my dog to the café?', cafe, 'Dogs are welcome on the Back Cove patio, but not indoors.'],
    ] as const) {
      answers(q, [...chunks], { sentence });
    }
  });
  it('when and how many are circumstances of what is asked ("a table for six on Saturday morning?"), unless asked for', () => {
    const chunks = [
      { text: "We don't take table reservations; seating is first come, first served.", url: '/faq', title: 'FAQ', section: 'FAQ' },
      { text: 'Saturday — Old Port: 8 am – 6 pm; Back Cove: 8 am – 4 pm', url: '/hours', title: 'Hours', section: 'Hours' },
      { text: 'A few 6-inch cakes are in the case every day from Thursday to Sunday.', url: '/cakes', title: 'Cakes', section: 'Cakes' },
      { text: 'Both cafés open at 7 am on weekdays.', url: '/hours', title: 'Hours', section: 'Hours › Weekdays' },
      { text: 'Everything is baked on site every morning.', url: '/about', title: 'About', section: 'About' },
      { text: 'Morning buns sell out early on Saturday and Sunday morning.', url: '/menu', title: 'Menu', section: 'Menu' },
      { text: 'Wholesale deliveries go out on Saturday too.', url: '/wholesale', title: 'Wholesale', section: 'Wholesale' },
    ];
    answers('Can I reserve a table for six on Saturday morning?', chunks, { url: '/faq' });
    expect(rankSentences('What time do you open on Saturday?', chunks)[0]).toMatchObject({ sentence: 'Saturday — Old Port: 8 am – 6 pm; Back Cove: 8 am – 4 pm' });
  });
});

// Issue 39, French: a French page's inflected words meet the visitor's, English words stem as PostgreSQL's `english`
// configuration does, and French function words weigh nothing.
describe('French as well as English', () => {
  it('stems French words with French endings and English ones with Porter2', async () => {
    const { stem } = await import('./analysis.ts');
    expect(stem('commandes')).toBe(stem('commande'));
    expect(stem('ouverte')).toBe(stem('ouvert'));
    expect(stem('boutiques')).toBe(stem('boutique'));
    expect(stem('plugging')).toBe(stem('plugged'));
    expect(stem('opening')).toBe('open');
  });

  it('leaves French function words and modal verbs out of a question\'s terms', async () => {
    const { analyzeQuestion } = await import('./analysis.ts');
    const q = analyzeQuestion('pièce montée faut commander combien de temps avant');
    expect(q.terms.map((t) => t.word).filter((w) => !q.terms.find((t) => t.word === w)?.typeWord)).toEqual(['piece', 'montee', 'commander']);
    expect(q.want).toBe('duration');
  });
});

describe('table rows (issue 39, thirteenth pass)', () => {
  const fees = {
    url: 'https://s.example/pricing', title: 'Pricing', section: 'Pricing › Fees',
    text: 'Admin fee — Amount: $25; Notes: Waived when you reserve online. Security deposit — Amount: None. Second late fee — Amount: $30; Notes: Charged when rent is 15 days past due. Late fee — Amount: $20; Notes: Charged when rent is 5 days past due.',
  };
  const loaves = {
    url: 'https://s.example/breads', title: 'Our breads', section: 'Our breads › Range and prices',
    text: 'Wholemeal loaf — Weight: 400 g; Available: Every day. Seeded loaf — Weight: 400 g; Available: Every day. Rye loaf — Weight: 400 g; Available: Tuesday, Thursday and Saturday. Walnut loaf — Weight: 300 g; Available: Every day.',
  };

  it('a row is about its own item: a word of the next row is not lent to it', () => {
    // The second part of "what is the admin fee and do you charge a deposit", read with the first as its circumstances.
    const own = new Set(analyzeQuestion('do you charge a deposit').terms.map((t) => t.stem));
    const whole = analyzeQuestion('do you charge a deposit. what is the admin fee');
    const question = { ...whole, terms: whole.terms.map((t) => (own.has(t.stem) ? t : { ...t, incidental: true })) };
    const ranked = rankSentences(question, [fees], undefined, 10);
    const admin = ranked.find((r) => r.sentence.startsWith('Admin fee'))!;
    const deposit = ranked.find((r) => r.sentence.startsWith('Security deposit'))!;
    expect(deposit.score).toBeGreaterThan(admin.score);
  });

  it('of the items a question names, a row labelled with none of them is another item, whatever its cells share', () => {
    expect(rankSentences('is the rye loaf available every day?', [loaves])[0]!.sentence).toMatch(/^Rye loaf/);
  });

  it('"do you charge a deposit?": a sentence denying the thing asked answers, though it names no price', () => {
    const faq = { url: 'https://s.example/faq', title: 'FAQ', section: 'FAQ › Renting', text: 'There is no security deposit. Rent is due on the first of the month.' };
    const ranked = rankSentences('Do you charge a deposit?', [fees, faq], undefined, 10);
    expect(ranked[0]!.sentence).toBe('There is no security deposit.');
    expect(ranked[0]!.score).toBeGreaterThan(ranked.find((r) => r.sentence.startsWith('Security deposit'))!.score);
  });
});

describe('words for any time or place (issue 39, thirteenth pass)', () => {
  it('"whenever", "wherever" say how freely, not what is asked: circumstances', () => {
    const terms = analyzeQuestion('can i cancel whenever').terms;
    expect(terms.find((t) => t.word === 'whenever')?.incidental).toBe(true);
    expect(terms.find((t) => t.word === 'cancel')?.incidental).toBe(false);
    expect(analyzeQuestion('can i park wherever i like').terms.find((t) => t.word === 'wherever')?.incidental).toBe(true);
  });
});
