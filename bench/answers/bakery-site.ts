import { serveSite, table, type AnswersSite, type Page } from './serve.ts';

/**
 * The third fixture of the answers evaluation, written (with its questions) before the ranking was
 * tuned on it: Hearth & Crumb, a bakery with two cafés and a catering service. 31 pages: prices,
 * hours, cake sizes and catering menus in tables, lists, an FAQ, refund and pickup policies, a team
 * page, classes, reviews and a blog whose posts mention prices, durations, places and people that
 * are not the bakery's answers (distractions).
 */

const NAV = [['/', 'Home'], ['/menu', 'Menu'], ['/cakes', 'Custom cakes'], ['/catering', 'Catering'], ['/hours', 'Hours'],
  ['/locations', 'Locations'], ['/team', 'Our people'], ['/faq', 'FAQ'], ['/blog', 'Journal'], ['/contact', 'Contact']] as const;

const PAGES: Record<string, Page> = {
  '/': { title: 'Hearth & Crumb Bakery', body: `
    <h1>Sourdough, pastries and coffee in Portland, Maine</h1>
    <p>Hearth &amp; Crumb has baked in Portland since 2014. We have two cafés: Old Port and Back Cove.</p>
    <p>Everything is baked on site every morning, starting at 4 am.</p>
    <h2>What we make</h2>
    <ul><li>Naturally leavened bread</li><li>Croissants and morning buns</li><li>Custom cakes</li><li>Catering for offices and events</li></ul>` },
  '/about': { title: 'Our story', body: `
    <h1>Our story</h1>
    <p>Nadia Brooks opened Hearth &amp; Crumb in 2014 after eight years as a pastry chef at a hotel in Boston.</p>
    <p>The Back Cove café followed in 2019. Today a crew of 34 bakes around 600 loaves a day.</p>
    <h2>Ingredients</h2>
    <p>Our wheat is grown and milled in Aroostook County. Our coffee is roasted for us by Hillside Roasters in Biddeford.</p>` },
  '/locations': { title: 'Locations', body: `
    <h1>Our cafés</h1>
    <h2>Old Port</h2>
    <p>41 Wharf Street, Portland, ME 04101.</p>
    <p>Street parking only; the Fore Street garage is two blocks away.</p>
    <h2>Back Cove</h2>
    <p>780 Forest Avenue, Portland, ME 04103.</p>
    <p>Free parking behind the building. Seats 40 inside, with a patio from May to October.</p>` },
  '/hours': { title: 'Opening hours', body: `
    <h1>Opening hours</h1>
    ${table(['Day', 'Old Port', 'Back Cove'], [
      ['Monday', 'Closed', '7 am – 3 pm'],
      ['Tuesday to Friday', '7 am – 6 pm', '7 am – 3 pm'],
      ['Saturday', '8 am – 6 pm', '8 am – 4 pm'],
      ['Sunday', '8 am – 2 pm', '8 am – 2 pm'],
    ])}
    <h2>Holidays</h2>
    <p>Both cafés are closed on Thanksgiving, Christmas Day and New Year's Day. On Christmas Eve we close at noon.</p>` },
  '/menu': { title: 'Menu', body: `
    <h1>Everyday menu</h1>
    ${table(['Item', 'Price'], [
      ['Country sourdough loaf', '$9'],
      ['Baguette', '$4.50'],
      ['Butter croissant', '$4.25'],
      ['Almond croissant', '$5.25'],
      ['Cinnamon morning bun', '$4.75'],
      ['Blueberry muffin', '$3.75'],
      ['Drip coffee', '$3'],
      ['Latte', '$5.25'],
    ])}
    <p>Oat milk or almond milk is 75 cents extra.</p>
    <ul><li><a href="/menu/breads">Breads</a></li><li><a href="/menu/pastries">Pastries</a></li><li><a href="/menu/drinks">Drinks</a></li></ul>` },
  '/menu/breads': { title: 'Breads', body: `
    <h1>Breads</h1>
    <p>Our country sourdough ferments for 36 hours before it goes in the oven.</p>
    <p>Rye and seeded loaves are baked on Tuesdays, Thursdays and Saturdays only.</p>
    <p>We slice any loaf on request at no charge.</p>
    <p>Yesterday's loaves are sold at half price from the basket by the door.</p>` },
  '/menu/pastries': { title: 'Pastries', body: `
    <h1>Pastries</h1>
    <p>Marcus Bell, our pastry chef, laminates every croissant by hand with French butter over three days.</p>
    <p>Pastries often sell out by 11 am on weekends. Call the day before to put a dozen aside.</p>` },
  '/menu/drinks': { title: 'Drinks', body: `
    <h1>Drinks</h1>
    <p>Espresso drinks use our house blend; decaf is available all day.</p>
    <p>We pour Maine-made kombucha on tap and fresh orange juice.</p>
    <p>We do not serve alcohol.</p>` },
  '/cakes': { title: 'Custom cakes', body: `
    <h1>Custom cakes</h1>
    ${table(['Size', 'Serves', 'Price'], [
      ['6-inch round', '8 to 10', '$48'],
      ['8-inch round', '14 to 18', '$68'],
      ['10-inch round', '25 to 30', '$95'],
      ['Two-tier', '40 to 50', '$210'],
    ])}
    <p>Order custom cakes at least 72 hours before you need them.</p>
    <p>A 50% deposit is due when you order. Writing on the cake is free; an edible photo print is $12.</p>
    <h2>Wedding cakes</h2>
    <p>Wedding cakes start with a tasting, booked at least three months before the wedding date.</p>` },
  '/catering': { title: 'Catering', body: `
    <h1>Catering</h1>
    <p>We cater office breakfasts, working lunches and events for 10 to 200 guests.</p>
    <p>The minimum catering order is $150.</p>
    <p>Delivery within 10 miles of the Old Port café costs $25, and is free on orders over $500.</p>
    <p>Luis Ortega, our catering manager, plans every order with you.</p>
    <ul><li><a href="/catering/menus">Catering menus</a></li><li><a href="/catering/ordering">How to order</a></li></ul>` },
  '/catering/menus': { title: 'Catering menus', body: `
    <h1>Catering menus</h1>
    ${table(['Package', 'Price'], [
      ['Breakfast box: pastries, fruit and coffee', '$14 per person'],
      ['Sandwich lunch with salad and a cookie', '$17 per person'],
      ['Cookie and bar platter (24 pieces)', '$42'],
      ['Coffee traveler (serves 12)', '$32'],
    ])}
    <p>Vegetarian sandwiches are part of every lunch order.</p>` },
  '/catering/ordering': { title: 'How to order catering', body: `
    <h1>How to order catering</h1>
    <ol><li>Send us your date, head count and address.</li><li>We reply with a quote.</li><li>Confirm by card.</li></ol>
    <p>Place catering orders by noon, two business days before your event.</p>
    <p>Orders cancelled with less than 48 hours' notice are charged in full.</p>` },
  '/allergens': { title: 'Allergens', body: `
    <h1>Allergens and diets</h1>
    <p>All our baking happens in one kitchen that uses wheat, tree nuts, peanuts, eggs and dairy, so we cannot promise any item is free of them.</p>
    <p>Gluten-free brownies and flourless almond cakes are baked on Fridays, in the same kitchen.</p>
    <p>Vegan choices: the country sourdough, the baguette and the morning glory muffin.</p>
    <p>Ask at the counter for the ingredient list of anything we sell.</p>` },
  '/wholesale': { title: 'Wholesale', body: `
    <h1>Wholesale bread</h1>
    <p>We supply about 20 restaurants and shops in southern Maine.</p>
    <p>Wholesale accounts need a standing order of at least $100 a week. Write to wholesale@hearthandcrumb.example.</p>` },
  '/team': { title: 'Our people', body: `
    <h1>Our people</h1>
    <h2>Nadia Brooks, Founder and Head Baker</h2><p>Nadia writes the bread recipes and still works the early shift twice a week.</p>
    <h2>Marcus Bell, Pastry Chef</h2><p>Marcus makes our laminated pastries and designs the custom cakes.</p>
    <h2>Luis Ortega, Catering Manager</h2><p>Luis plans office orders and events from first call to delivery.</p>
    <h2>Priya Shah, Café Manager</h2><p>Priya runs the Back Cove café.</p>
    <h2>Jonah Whitfield, Bread Baker</h2><p>Jonah leads the night bake and teaches our bread classes.</p>` },
  '/classes': { title: 'Baking classes', body: `
    <h1>Baking classes</h1>
    <p>Learn to bake sourdough at home in a three-hour Saturday class at the Back Cove café.</p>
    <p>A class costs $85, includes a jar of our starter to take home, and is limited to 8 people.</p>
    <p>Kids' cookie decorating runs on the first Sunday of each month for ages 6 to 12, at $25 per child.</p>` },
  '/faq': { title: 'Frequently asked questions', body: `
    <h1>FAQ</h1>
    <h3>Is there Wi-Fi?</h3><p>Yes, both cafés have free Wi-Fi.</p>
    <h3>Are dogs allowed?</h3><p>Dogs are welcome on the Back Cove patio, but not indoors.</p>
    <h3>Do you take reservations?</h3><p>We don't take table reservations; seating is first come, first served.</p>
    <h3>Can I buy a cake without ordering ahead?</h3><p>A few 6-inch cakes are in the case every day from Thursday to Sunday.</p>
    <h3>Do you sell your starter?</h3><p>Yes, a jar of sourdough starter is $6 at either counter.</p>` },
  '/policies/refunds': { title: 'Refunds', body: `
    <h1>Refunds</h1>
    <p>If something isn't right, bring it back the same day with your receipt and we will replace it or refund you.</p>
    <p>Cake deposits are refunded in full if you cancel more than 72 hours before pickup, and kept after that.</p>` },
  '/policies/pickup': { title: 'Pickup', body: `
    <h1>Pre-order pickup</h1>
    <p>Pre-orders are ready from 8 am at the café you chose when ordering.</p>
    <p>Orders that are not collected by closing time are donated to a local food pantry.</p>` },
  '/loyalty': { title: 'Loyalty card', body: `
    <h1>Loyalty card</h1>
    <p>Ask for a stamp card: every tenth drink is on us.</p>
    <p>Bring your own cup and we take 25 cents off any drink.</p>` },
  '/contact': { title: 'Contact', body: `
    <h1>Contact us</h1>
    <p>Call either café at (207) 555-0112 during opening hours.</p>
    <p>Email hello@hearthandcrumb.example; we reply within two business days.</p>
    <p>Catering: catering@hearthandcrumb.example or (207) 555-0148.</p>` },
  '/careers': { title: 'Careers', body: `
    <h1>Work with us</h1>
    <p>We are hiring early-morning bakers (shifts start at 4 am) and weekend baristas.</p>
    <p>Pay starts at $18 an hour plus tips. Send a short note and your CV to jobs@hearthandcrumb.example.</p>` },
  '/reviews': { title: 'Reviews', body: `
    <h1>Kind words</h1>
    <p>"The best croissant I have had outside Paris." — Anna, Falmouth</p>
    <p>"They catered our 60-person retreat in Kennebunk and it came to about $900. Worth every cent." — Greg, Saco</p>
    <p>"I drive up from Boston once a month just for the morning buns." — Tom, Boston</p>` },
  '/blog': { title: 'Journal', body: `
    <h1>Journal</h1>
    <ul>
      <li><a href="/blog/starter">How to keep a sourdough starter alive</a></li>
      <li><a href="/blog/quebec">Visiting flour mills in Quebec</a></li>
      <li><a href="/blog/lisbon">Custard tarts in Lisbon</a></li>
      <li><a href="/blog/bread-prices">Why good bread costs what it does</a></li>
      <li><a href="/blog/oven">Meet our new oven</a></li>
      <li><a href="/blog/coffee">Brewing better coffee at home</a></li>
    </ul>` },
  '/blog/starter': { title: 'How to keep a sourdough starter alive', body: `
    <h1>How to keep a sourdough starter alive</h1>
    <p>At room temperature, feed your starter twice a day with equal weights of flour and water.</p>
    <p>A starter kept in the fridge needs feeding only once a week, and wakes up within a day.</p>` },
  '/blog/quebec': { title: 'Visiting flour mills in Quebec', body: `
    <h1>Visiting flour mills in Quebec</h1>
    <p>Nadia spent a week in Montreal and the Eastern Townships this winter visiting small stone mills.</p>
    <p>A 20-kilo bag of stone-ground flour there costs about $40, and one miller, Julien Roy, grinds only to order.</p>` },
  '/blog/lisbon': { title: 'Custard tarts in Lisbon', body: `
    <h1>Custard tarts in Lisbon</h1>
    <p>In Lisbon a pastel de nata costs about one euro and is eaten warm, standing at the counter.</p>
    <p>The shops there open at 7 am and many stay open until midnight.</p>` },
  '/blog/bread-prices': { title: 'Why good bread costs what it does', body: `
    <h1>Why good bread costs what it does</h1>
    <p>A supermarket loaf costs about $3 and is made in under three hours.</p>
    <p>Ours has three ingredients, a day and a half of fermentation, and a baker's night of work.</p>` },
  '/blog/oven': { title: 'Meet our new oven', body: `
    <h1>Meet our new oven</h1>
    <p>Our new deck oven came from Italy in March and bakes 60 loaves at a time.</p>
    <p>It took a crane and two days to lift it into the Old Port kitchen.</p>` },
  '/blog/coffee': { title: 'Brewing better coffee at home', body: `
    <h1>Brewing better coffee at home</h1>
    <p>Use 60 grams of coffee per litre of water and brew for four minutes in a French press.</p>
    <p>Buy whole beans and grind them just before brewing.</p>` },
};

/** Serves the site on 127.0.0.1 (random port). */
export function startBakerySite(): Promise<AnswersSite> {
  return serveSite({ brand: 'Hearth & Crumb', nav: NAV, pages: PAGES });
}
