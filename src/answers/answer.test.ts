import { describe, expect, it } from 'vitest';
import { composeAnswer } from './answer.ts';
import type { Passage } from './retrieval.ts';

// Issue 39: "Is there a storage fee?" got "No, … are charged a storage fee of $5 per day", and "Do I need an appointment?"
// got "Yes, … recommended but not required". A yes/no reply takes the polarity of the sentence it gives, or none.

const passage = (answer: string): Passage => ({ text: answer, answer, url: 'https://shop.test/faq', title: 'FAQ', section: 'FAQ', score: 0.9 });

const CASES: [question: string, sentence: string, polarity: 'yes' | 'no' | 'either'][] = [
  ['Is there a storage fee?', 'Items left more than 7 days are charged a storage fee of $5 per day.', 'yes'],
  ['Do I need an appointment?', 'Appointments are recommended but not required.', 'no'],
  ['Do I need an appointment?', 'No appointment is needed for nail trims.', 'no'],
  ['Can I bring my dog?', 'Dogs are welcome on a leash.', 'yes'],
  ['Can I bring my dog?', 'Pets are not allowed inside, except service animals.', 'no'],
  ['Do you take checks?', 'We do not accept personal checks.', 'no'],
  ['Do you deliver on Sundays?', 'We deliver Monday to Saturday; there is no delivery on Sunday.', 'no'],
  ['Is parking free?', 'Parking is free for the first two hours.', 'yes'],
  // The thing asked about in a list after the negation, past the comma the clause reading stops at.
  ['do u take venmo', 'We do not accept PayPal, Venmo, Zelle or cryptocurrency.', 'no'],
  // The subject before the negation: the sentence denies it whole.
  ['do you do lash extensions', 'Eyelash extensions and lash lifts are not part of our menu at any location.', 'no'],
];

describe('a yes/no reply never contradicts its sentence', () => {
  it.each(CASES)('%s / %s', (question, sentence, polarity) => {
    const reply = composeAnswer(question, [passage(sentence)])?.text ?? '';
    // Whatever it leads with, it never leads with the opposite of what the sentence says.
    if (polarity === 'yes') expect(reply).not.toMatch(/^No\b/);
    if (polarity === 'no') expect(reply).not.toMatch(/^Yes\b/);
    expect(reply).toContain(sentence.replace(/^./, (c) => c.toLowerCase()).slice(1, 30));
  });
});

// Issue 39: a question about one location got a table row with every location's value ("Sunday — Riverside: 10 am –
// 4 pm; Maplewood: Closed; Harbor Point: 11 am – 5 pm" to "what time does riverside open on sundays").
describe('a table row gives the cells the question names', () => {
  const row = (answer: string, section = 'Locations › Opening hours'): Passage => ({ text: answer, answer, url: 'https://salon.test/locations', title: 'Locations', section, score: 0.8 });
  const HOURS = 'Sunday — Riverside: 10:00 am – 4:00 pm; Maplewood: Closed; Harbor Point: 11:00 am – 5:00 pm.';

  it('keeps the row\'s label and the named location\'s cell', () => {
    expect(composeAnswer('what time does riverside open on sundays', [row(HOURS)])?.text).toMatch(/^Sunday — Riverside: 10:00 am – 4:00 pm\.\n?/);
    expect(composeAnswer('r u open sunday at harbor point', [row(HOURS)])?.text).toMatch(/^(Yes, )?[Ss]unday — Harbor Point: 11:00 am – 5:00 pm\./);
  });

  it('answers a yes/no question by the named cells\' marks, with the whole row when they say no', () => {
    const SERVICES = 'Manicures & pedicures — Riverside: ✓; Maplewood: ✓; Harbor Point: —.';
    expect(composeAnswer('does the harbor point location do manicures', [row(SERVICES, 'Locations › Services')])?.text)
      .toBe(`No. ${SERVICES}`);
    expect(composeAnswer('can i get a manicure at maplewood', [row(SERVICES, 'Locations › Services')])?.text)
      .toBe('Yes. Manicures & pedicures — Maplewood: ✓.');
  });

  it('says yes or no in the question\'s language', () => {
    const reply = composeAnswer('vous acceptez les chèques ?', [passage('Nous n\'acceptons pas les chèques.')])?.text ?? '';
    expect(reply).not.toMatch(/^(Yes|No)\b/);
    expect(reply).not.toMatch(/^Oui\b/);
  });

  it('keeps the cell whose heading the question names the most of, when it names none whole', () => {
    const DESK = 'Monday – Friday — Front desk: 9:00 am – 5:00 pm; Loading dock & freight lift: 7:00 am – 3:00 pm.';
    expect(composeAnswer('when does the loading dock open', [row(DESK, 'Building › Hours')])?.text)
      .toMatch(/^Monday – Friday — Loading dock & freight lift: 7:00 am – 3:00 pm\./);
    // Named in part, a cell must hold the kind of answer asked: "how much a slice" asks a price, not "Slices per cake".
    const CAKE = 'Carrot cake — Price: $4.50 a slice; Slices per cake: 8 to 12; Notice: 48 h.';
    expect(composeAnswer('carrot cake how much a slice', [row(CAKE, 'Cakes')])?.text).toContain('Price: $4.50 a slice');
    // A heading named whole is still the one kept, not one merely named more of.
    const SIZES = 'Price — Small: $5; Small batch refill: $4.';
    expect(composeAnswer('how much is a small', [row(SIZES, 'Menu')])?.text).toMatch(/^Price — Small: \$5\./);
  });

  it('a part that names no location takes the cells of the one its message names (`named`)', () => {
    const PARKING = 'Parking — Eastfield: Free lot behind the building; Millbrook: Public lot on Lock Lane.';
    const asked = { ...row(PARKING, 'Locations'), named: ['eastfield'] };
    expect(composeAnswer('is the parking free', [asked])?.text).toMatch(/Parking — Eastfield: Free lot behind the building\.$/m);
    expect(composeAnswer('is the parking free', [row(PARKING, 'Locations')])?.text).toContain('Lock Lane');
  });

  it('a name the message asks about keeps its capital after "Yes," or "No," however the visitor wrote it', () => {
    const sentence = 'Hilltop does not run walk-in evenings.';
    expect(composeAnswer('can i walk in at hilltop', [{ ...passage(sentence), named: ['hilltop'] }])?.text).toMatch(/^No, Hilltop does not/);
  });

  it('keeps the whole row when the question names none of its columns, or all', () => {
    expect(composeAnswer('are you open on sundays', [row(HOURS)])?.text).toContain('Maplewood: Closed; Harbor Point');
    const price = 'Day pass — Price: $22; What you get: One visit, all day.';
    expect(composeAnswer('How much is a day pass?', [row(price, 'Pricing')])?.text).toContain(price);
  });
});

// Issue 39: a fact that lives in a collapsed FAQ entry. The entry whose question is what was asked answers with its
// answer as the site wrote it, from its start, not with one sentence of it.
describe('an FAQ entry on what was asked answers whole', () => {
  const loyalty = ['It is free at the till.', 'You get a stamp for every visit over $5.', 'After 10 stamps, a loaf is on us.', 'The card does not apply to cake orders.'];
  const entry = { question: 'How does the loyalty card work?', answer: loyalty };
  const faq = (answer: string): Passage => ({ text: answer, answer, url: 'https://shop.test/faq', title: 'FAQ', section: 'FAQ › How does the loyalty card work?', score: 0.93, entry });

  it('gives the entry from its start, in order, up to the sentence chosen', () => {
    const reply = composeAnswer('how does the loyalty card work', [faq(loyalty[3]!)])?.text ?? '';
    expect(reply).toBe(loyalty.join(' '));
  });

  it('keeps to the sentence chosen when the entry is on something else than what was asked', () => {
    const other = { question: 'How do I get a copy of my pet\'s records?', answer: ['Ask at the front desk.', 'We email them within 3 days.', 'We do not bill insurance companies directly.'] };
    const p: Passage = { ...faq(other.answer[2]!), entry: other };
    expect(composeAnswer('will you bill my pet insurance directly', [p])?.text).toMatch(/^No, we do not bill insurance companies directly\.$/);
  });

  it('reads the question as retrieval read it (its slips mended)', () => {
    const row = 'Saturday — Showroom: 9:00 am – 2:00 pm; Trade counter: Closed';
    const week = ['Monday – Friday — Showroom: 8:00 am – 5:30 pm; Trade counter: 7:00 am – 4:00 pm', row, 'Sunday — Showroom: Closed; Trade counter: Closed'];
    const rows = week.map((answer): Passage => ({ text: answer, answer, url: 'https://shop.test/hours', title: 'Hours', section: 'Hours', score: 0.9, asked: 'when does the showroom close on saturday' }));
    expect(composeAnswer('when does the showroom close on satuday', [rows[1]!, rows[0]!, rows[2]!])?.text).toBe('Saturday — Showroom: 9:00 am – 2:00 pm.');
  });
});

describe('a "No" and what the page says next', () => {
  const on = (answer: string, text: string, url = 'https://shop.test/locations'): Passage => ({ text, answer, url, title: 'Locations', section: 'Parking', score: 0.9 });

  it('adds the next sentence when it is on the same thing, and not an unrelated one', () => {
    const no = "Harbor doesn't have its own parking lot.";
    const related = composeAnswer('does harbor have its own parking lot', [on(no, `${no} There is metered street parking along Dock Street.`)]);
    expect(related?.text).toBe("No, harbor doesn't have its own parking lot. There is metered street parking along Dock Street.");
    const unrelated = composeAnswer('does harbor have its own parking lot', [on(no, `${no} Tape-in extensions are offered at Riverside only.`)]);
    expect(unrelated?.text).toBe("No, harbor doesn't have its own parking lot.");
  });

  it('gives no "Yes" from a post', () => {
    const said = 'Our $79 spring furnace tune-up special ran from March 1 through April 30, and it is now closed.';
    const reply = composeAnswer('can i still get the $79 furnace tune up', [on(said, said, 'https://shop.test/blog/special-ended')]);
    expect(reply?.text).toBe(said);
  });
});

// Issue 39: "where am i supposed to park at the riverside building" got "There is no customer parking lot at Riverside.",
// and not the sentence after it, which says what to do instead.
describe('a denial that answers a question is followed by what the site says instead', () => {
  const context = 'There is no customer parking lot at Riverside. Instead, pull into one of our covered loading bays behind the building. Units are heated.';
  const at = (answer: string): Passage => ({ text: context, answer, url: 'https://storage.test/riverside', title: 'Riverside', section: 'Riverside', score: 0.9 });

  it('adds the next sentence when it refers back to the denial', () => {
    expect(composeAnswer('where do i park at riverside?', [at('There is no customer parking lot at Riverside.')])?.text)
      .toBe('There is no customer parking lot at Riverside. Instead, pull into one of our covered loading bays behind the building.');
  });

  it('adds nothing after a sentence that denies nothing, or a next sentence that does not refer back', () => {
    expect(composeAnswer('where do i load at riverside?', [at('Instead, pull into one of our covered loading bays behind the building.')])?.text)
      .not.toContain('Units are heated');
    const plain: Passage = { ...at('There is no customer parking lot at Riverside.'), text: 'There is no customer parking lot at Riverside. Units are heated.' };
    expect(composeAnswer('where do i park at riverside?', [plain])?.text).toBe('There is no customer parking lot at Riverside.');
  });
});

// Issue 39: French yes/no questions ("vous acceptez … ?", "c'est ouvert … ?") are answered "Oui" or "Non" as the sentence says.
describe('a French yes/no reply', () => {
  it('says "Non" for a sentence that denies or says closed, "Oui" for one that affirms', () => {
    expect(composeAnswer('vous acceptez les cartes American Express ?', [passage("Nous n'acceptons pas les cartes American Express.")])?.text)
      .toBe("Non, nous n'acceptons pas les cartes American Express.");
    expect(composeAnswer("c'est ouvert le dimanche ?", [passage('Fermée le dimanche.')])?.text).toMatch(/^Non, /);
    expect(composeAnswer('vous acceptez les chiens en boutique ?', [passage('Les chiens tenus en laisse sont acceptés en boutique.')])?.text)
      .not.toMatch(/^Non\b/);
  });
});
