import { no, yes, type Question } from './questions.ts';

/**
 * The questions of the third fixture (Hearth & Crumb, bakery-site.ts), written with the site and
 * committed before any ranking change was made with it, as a customer would ask: paraphrased, in
 * words the pages mostly do not use. Judged as the first set's (questions.ts); every fourth is held
 * out.
 */

export const BAKERY_QUESTIONS: Question[] = [
  // price
  { kind: 'price', q: 'What does a loaf of your sourdough go for?', expect: [/\$9\b/] },
  { kind: 'price', q: 'What would a cake big enough for about 30 guests set me back?', expect: [/\$95\b/] },
  { kind: 'price', q: 'Do you charge more for oat milk?', expect: [/75 cents/] },
  { kind: 'price', q: 'How much per head is a catered lunch?', expect: [/\$17\b/] },
  { kind: 'price', q: 'How much is the bread-making workshop?', expect: [/\$85\b/] },
  { kind: 'price', q: "What's the fee to have catering brought to our office?", expect: [/\$25\b/] },
  { kind: 'price', q: "What's the smallest catering order you'll take?", expect: [/\$150\b/] },
  // hours
  { kind: 'hours', q: 'What time do you open on a Sunday?', expect: [/\b8 am\b/] },
  { kind: 'hours', q: 'Is the Old Port café open on Mondays?', expect: [/closed/i] },
  { kind: 'hours', q: 'How late is the Back Cove shop open on a Saturday?', expect: [/\b4 pm\b/] },
  { kind: 'hours', q: 'Are you open on Christmas?', expect: [/closed/i] },
  { kind: 'hours', q: 'What time do you shut on weekdays in the Old Port?', expect: [/\b6 pm\b/] },
  // where
  { kind: 'where', q: "Where's your Old Port shop?", expect: [/41 Wharf Street/] },
  { kind: 'where', q: 'Where exactly is the Back Cove bakery?', expect: [/780 Forest Avenue/] },
  { kind: 'where', q: 'Where can I leave my car at Back Cove?', expect: [/behind the building/i] },
  { kind: 'where', q: 'Where do your coffee beans come from?', expect: [/Hillside Roasters/] },
  // who
  { kind: 'who', q: 'Who started the bakery?', expect: [/Nadia Brooks/] },
  { kind: 'who', q: 'Who should I talk to about food for a company event?', expect: [/Luis Ortega|catering@hearthandcrumb/] },
  { kind: 'who', q: 'Who makes the croissants?', expect: [/Marcus Bell/] },
  { kind: 'who', q: 'Who runs the sourdough lessons?', expect: [/Jonah Whitfield/] },
  // contact
  { kind: 'contact', q: "What's the bakery's phone number?", expect: [/555-0112/] },
  { kind: 'contact', q: 'Which email address handles catering requests?', expect: [/catering@hearthandcrumb\.example/] },
  { kind: 'contact', q: 'How soon will I hear back if I email you?', expect: [/two business days/i] },
  { kind: 'contact', q: 'Where do I send my resume if I want a job?', expect: [/jobs@hearthandcrumb\.example/] },
  // duration
  { kind: 'duration', q: 'How much notice do you need for a birthday cake?', expect: [/72 hours/] },
  { kind: 'duration', q: 'How long does the sourdough rise?', expect: [/36 hours/] },
  { kind: 'duration', q: 'How far in advance should we set up a wedding cake tasting?', expect: [/three months/] },
  { kind: 'duration', q: 'How long does the bread class last?', expect: [/three-hour|three hours/] },
  { kind: 'duration', q: "What's the latest I can put in a catering order?", expect: [/two business days/i] },
  // yes/no
  { kind: 'yes_no', q: 'Can I bring my dog inside?', expect: [no] },
  { kind: 'yes_no', q: 'Do you have anything for people who cannot eat gluten?', expect: [/Fridays/] },
  { kind: 'yes_no', q: 'Can I book a table for six on Saturday?', expect: [no] },
  { kind: 'yes_no', q: 'Can I get a glass of wine with lunch?', expect: [no] },
  { kind: 'yes_no', q: 'Is the bakery safe for someone with a nut allergy?', expect: [/nuts/i] },
  { kind: 'yes_no', q: 'Will you cut my bread into slices?', expect: [/slice/i, /no charge/i] },
  { kind: 'yes_no', q: 'Is there internet I can use while I work?', expect: [yes, /Wi-Fi/i] },
  // policy
  { kind: 'policy', q: 'If I cancel my cake, do I get the deposit back?', expect: [/72 hours/] },
  { kind: 'policy', q: "What happens if I don't come to get my pre-order?", expect: [/donated|food pantry/i] },
  { kind: 'policy', q: 'Do you have a rewards program?', expect: [/tenth drink/i] },
  { kind: 'policy', q: 'Is there a discount for bringing my own mug?', expect: [/25 cents/] },
  { kind: 'policy', q: 'What can vegans eat at your place?', expect: [/sourdough|baguette|morning glory/i] },
  // elsewhere
  { kind: 'elsewhere', q: 'Do you have a shop in Boston?', expect: [/Portland/] },
  { kind: 'elsewhere', q: 'Is there a branch in Falmouth?', expect: [/Portland|Old Port|Back Cove/] },
  // unknown
  { kind: 'unknown', q: 'Do you sell gift cards?' },
  { kind: 'unknown', q: 'Can you mail bread to another state?' },
  { kind: 'unknown', q: 'Are your eggs free-range?' },
  { kind: 'unknown', q: 'Do you make bagels?' },
  { kind: 'unknown', q: "What's the price of a pumpkin pie?" },
  { kind: 'unknown', q: 'Is there a student discount?' },
  { kind: 'unknown', q: 'Can I rent the café for a private party?' },
  { kind: 'unknown', q: 'Do you have high chairs for toddlers?' },
  { kind: 'unknown', q: 'Do you give a discount to seniors?' },
  { kind: 'unknown', q: 'How many calories are in a croissant?' },
  { kind: 'unknown', q: 'Is there a drive-through?' },
  { kind: 'unknown', q: 'Are there power outlets to charge my laptop?' },
];
