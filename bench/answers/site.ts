import { serveSite, table, type AnswersSite, type Page } from './serve.ts';

export type { AnswersSite } from './serve.ts';

/**
 * The website of a made-up business for the answers evaluation: Cedar & Pine Climbing, a
 * climbing gym with two locations. 31 pages with what real small-business sites have: prices
 * and opening hours in tables, a team page, an FAQ, policies, lists, and a blog whose posts
 * mention prices, durations and places that are not the gym's (distractions). Every page has a
 * header with navigation and a footer, as real pages do.
 */

const NAV = [['/', 'Home'], ['/pricing', 'Pricing'], ['/hours', 'Hours'], ['/locations', 'Locations'], ['/classes', 'Classes'],
  ['/team', 'Team'], ['/faq', 'FAQ'], ['/blog', 'Blog'], ['/contact', 'Contact']] as const;

const PAGES: Record<string, Page> = {
  '/': { title: 'Cedar & Pine Climbing', body: `
    <h1>Climb with us in Portland</h1>
    <p>Cedar &amp; Pine is a bouldering and rope climbing gym with two locations in Portland, Oregon: Riverside and Eastside.
    Beginners are welcome and no experience is needed.</p>
    <h2>Why climb here</h2>
    <ul><li>Over 200 boulder problems and 90 rope routes</li><li>Yoga and fitness classes included with membership</li><li>Friendly staff and a strong community</li></ul>
    <p>See our <a href="/pricing">prices</a>, <a href="/classes">classes</a> and <a href="/youth">youth programs</a>.</p>` },
  '/about': { title: 'About us', body: `
    <h1>About Cedar &amp; Pine</h1>
    <p>Cedar &amp; Pine Climbing was founded in 2014 by Tom Okafor, a former mountain guide who wanted a gym where beginners feel at home.</p>
    <p>The Riverside gym opened first; Eastside followed in 2019. Today about 1,800 members climb with us.</p>
    <h2>Our values</h2>
    <p>We believe climbing is for everyone. We keep prices fair and run free adaptive climbing sessions every month.</p>` },
  '/locations': { title: 'Locations', body: `
    <h1>Our locations</h1>
    <p>Both of our gyms are in Portland, Oregon. Memberships work at both locations.</p>
    <h2>Riverside</h2>
    <p>120 Mill Street, Portland, OR 97214. Free parking in the lot behind the building.</p>
    <p>Riverside has our tallest walls (16 metres), the pro shop and the yoga studio.</p>
    <h2>Eastside</h2>
    <p>4800 SE Division Street, Portland, OR 97206. Street parking only; the number 4 bus stops in front of the gym.</p>
    <p>Eastside is a bouldering-only gym with a training board and a fitness area.</p>` },
  '/hours': { title: 'Opening hours', body: `
    <h1>Opening hours</h1>
    ${table(['Day', 'Riverside', 'Eastside'], [
      ['Monday', '6 am – 11 pm', 'Closed'],
      ['Tuesday to Friday', '6 am – 11 pm', '10 am – 10 pm'],
      ['Saturday', '8 am – 9 pm', '9 am – 8 pm'],
      ['Sunday', '8 am – 8 pm', '9 am – 6 pm'],
    ])}
    <h2>Holidays</h2>
    <p>Both gyms are closed on Thanksgiving Day and Christmas Day. On New Year's Day we open at noon.</p>
    <p>Eastside is closed on Mondays so that our setters can reset the walls.</p>` },
  '/pricing': { title: 'Pricing', body: `
    <h1>Passes and memberships</h1>
    ${table(['Plan', 'Price', 'What you get'], [
      ['Day pass', '$22', 'One visit, all day'],
      ['10-visit punch card', '$180', 'Ten visits, never expires'],
      ['Monthly membership', '$79 per month', 'Unlimited climbing, yoga and fitness classes'],
      ['Annual membership', '$790 per year', 'Two months free compared to paying monthly'],
      ['Student monthly', '$59 per month', 'With a valid student ID'],
    ])}
    <h2>Fees</h2>
    <p>There is a one-time $25 setup fee for monthly memberships. Members can freeze their membership for up to 3 months a year for $10 a month.</p>
    <p>We accept cash, debit and all major credit cards.</p>` },
  '/rentals': { title: 'Gear rental', body: `
    <h1>Gear rental</h1>
    ${table(['Item', 'Price'], [['Climbing shoes', '$6'], ['Harness', '$4'], ['Chalk bag', '$3'], ['Belay device', '$3'], ['Full rental kit', '$12']])}
    <p>Rentals are free on your first visit. Please wear socks with rental shoes.</p>` },
  '/classes': { title: 'Classes', body: `
    <h1>Classes</h1>
    ${table(['Class', 'Length', 'Price'], [
      ['Intro to Bouldering', '60 minutes', '$35'],
      ['Belay Certification', '90 minutes', '$55'],
      ['Lead Climbing Course', 'Four 2-hour sessions', '$240'],
      ['Technique Clinic', '75 minutes', '$30'],
    ])}
    <p>Every class includes gear rental. Book online or at the front desk; classes fill up about a week ahead.</p>
    <p>You must pass the Belay Certification before you top-rope on your own.</p>` },
  '/team': { title: 'Our team', body: `
    <h1>Meet the team</h1>
    <h2>Tom Okafor, Founder and Owner</h2><p>Tom guided in the Cascades for ten years before opening the gym.</p>
    <h2>Maya Chen, Head Coach</h2><p>Maya teaches the Lead Climbing Course and the adult technique clinics.</p>
    <h2>Priya Nair, Youth Programs Director</h2><p>Priya runs the youth team and the summer camps.</p>
    <h2>Luis Ortega, Head Route Setter</h2><p>Luis and his crew set new routes in each gym every week.</p>
    <h2>Dana Whitfield, Yoga Instructor</h2><p>Dana teaches all of our yoga classes.</p>` },
  '/youth': { title: 'Youth programs', body: `
    <h1>Youth programs</h1>
    <p>Children must be at least 4 years old to climb. Climbers under 14 must be accompanied by a parent or guardian.</p>
    <h2>Youth Climbing Team</h2>
    <p>For ages 10 to 17. Practice is on Tuesdays and Thursdays from 4 pm to 6 pm and costs $150 per month.</p>
    <h2>Summer camps</h2>
    <p>Weekly day camps run in July and August for ages 7 to 12 and cost $325 per week.</p>` },
  '/parties': { title: 'Birthday parties', body: `
    <h1>Birthday parties</h1>
    <p>Parties last 2 hours and cost $350 for up to 12 climbers; each extra climber is $20.</p>
    <p>Parties are held on Saturdays and Sundays at Riverside only. Book at least two weeks in advance.</p>
    <ul><li>A private party room for cake and presents</li><li>All climbing gear included</li><li>A dedicated instructor</li></ul>` },
  '/corporate': { title: 'Team building', body: `
    <h1>Corporate team building</h1>
    <p>We host team-building events for groups of 10 to 40 people, from $40 per person.</p>
    <p>Write to events@cedarpine.example to plan yours.</p>` },
  '/faq': { title: 'Frequently asked questions', body: `
    <h1>FAQ</h1>
    <h3>Do I need climbing experience?</h3><p>No, you do not need any experience. Take the Intro to Bouldering class or climb on your own in the bouldering area.</p>
    <h3>Can I bring my own gear?</h3><p>Yes, you can bring your own shoes, harness and chalk. Staff check harnesses at the front desk.</p>
    <h3>Do you have showers?</h3><p>Yes, both gyms have locker rooms with showers. Bring your own lock for the lockers.</p>
    <h3>Is there Wi-Fi?</h3><p>Yes, there is free Wi-Fi in both gyms.</p>
    <h3>Are pets allowed?</h3><p>No, pets are not allowed inside the gyms, except service animals.</p>
    <h3>Can I buy food at the gym?</h3><p>We sell snacks, coffee and sports drinks at the front desk.</p>` },
  '/policies/waiver': { title: 'Waiver', body: `
    <h1>Waiver</h1>
    <p>Every climber must sign our online waiver before the first visit. Climbers under 18 need a parent or guardian to sign.</p>
    <p>The waiver is valid for one year, then we ask you to sign again.</p>` },
  '/policies/memberships': { title: 'Membership policy', body: `
    <h1>Membership policy</h1>
    <h2>Cancelling</h2>
    <p>You can cancel a monthly membership at any time with 30 days' notice by emailing memberships@cedarpine.example.</p>
    <h2>Refunds</h2>
    <p>We do not refund day passes or punch cards. Annual memberships can be refunded within 14 days of purchase.</p>
    <h2>Freezing</h2>
    <p>Freeze your membership at the front desk or by email, for one to three months at a time.</p>` },
  '/policies/guests': { title: 'Guest policy', body: `
    <h1>Guests</h1>
    <p>Members may bring one guest per visit at half the day-pass price ($11). Guests must sign the waiver too.</p>` },
  '/contact': { title: 'Contact us', body: `
    <h1>Contact</h1>
    <p>Call us at (503) 555-0142 during opening hours.</p>
    <p>Email hello@cedarpine.example; we reply within one business day.</p>
    <p>For membership questions, write to memberships@cedarpine.example.</p>` },
  '/yoga': { title: 'Yoga', body: `
    <h1>Yoga for climbers</h1>
    <p>Yoga classes are included with monthly and annual memberships. Non-members pay $15 per class.</p>
    <p>Classes run on Monday, Wednesday and Friday at 7 am and 6 pm in the Riverside studio.</p>` },
  '/fitness': { title: 'Fitness area', body: `
    <h1>Fitness area</h1>
    <p>Both gyms have a fitness area with free weights, pull-up bars and stretching mats.</p>
    <p>Fitness classes such as core strength and mobility are free for members.</p>` },
  '/accessibility': { title: 'Accessibility', body: `
    <h1>Accessibility</h1>
    <p>Riverside is fully wheelchair accessible, including the restrooms.</p>
    <p>At Eastside the bouldering area is on the ground floor; the upper floor is reachable by stairs only.</p>
    <p>We run free adaptive climbing sessions on the first Sunday of every month.</p>` },
  '/careers': { title: 'Careers', body: `
    <h1>Work with us</h1>
    <p>We are hiring front desk staff and youth coaches. Send your resume to jobs@cedarpine.example.</p>
    <p>Staff climb for free and get 30% off in the shop.</p>` },
  '/shop': { title: 'Pro shop', body: `
    <h1>Pro shop</h1>
    <p>Our pro shop at Riverside sells climbing shoes from La Sportiva and Scarpa, chalk, brushes and tape.</p>
    <p>Members get 10% off everything in the shop.</p>` },
  '/events': { title: 'Events', body: `
    <h1>Events</h1>
    <p>Our bouldering competition takes place on the third Friday of every month at Eastside. Entry is $15.</p>
    <p>Film nights and route-setting workshops are announced on our blog.</p>` },
  '/blog': { title: 'Blog', body: `
    <h1>Blog</h1>
    <ul>
      <li><a href="/blog/first-bouldering-session">Five tips for your first bouldering session</a></li>
      <li><a href="/blog/smith-rock-trip">Our member trip to Smith Rock</a></li>
      <li><a href="/blog/route-setting">How we set routes</a></li>
      <li><a href="/blog/choosing-shoes">Choosing your first climbing shoes</a></li>
      <li><a href="/blog/climbing-in-denver">A week of climbing in Denver</a></li>
      <li><a href="/blog/member-spotlight">Member spotlight: Jen</a></li>
      <li><a href="/blog/finger-injuries">Looking after your fingers</a></li>
      <li><a href="/blog/new-training-board">Our new training board</a></li>
    </ul>` },
  '/blog/first-bouldering-session': { title: 'Five tips for your first bouldering session', body: `
    <h1>Five tips for your first bouldering session</h1>
    <p>Warm up for ten minutes before you climb. Start on the easiest problems and climb down whenever you can instead of jumping.</p>
    <p>Rest between attempts, drink water and stop before your arms are completely tired. Most beginners climb for about an hour.</p>` },
  '/blog/smith-rock-trip': { title: 'Our member trip to Smith Rock', body: `
    <h1>Our member trip to Smith Rock</h1>
    <p>Last October twelve members drove to Smith Rock State Park for a long weekend. We camped for three nights and climbed every day.</p>
    <p>The trip cost $120 per person, including camping and shared meals. Thanks to Maya for leading the group!</p>` },
  '/blog/route-setting': { title: 'How we set routes', body: `
    <h1>How we set routes</h1>
    <p>Our setters grade boulder problems from V0 to V10. A new set takes a crew of three about six hours.</p>
    <p>We listen to feedback: tell the front desk which problems you love.</p>` },
  '/blog/choosing-shoes': { title: 'Choosing your first climbing shoes', body: `
    <h1>Choosing your first climbing shoes</h1>
    <p>A good first pair costs between $90 and $180. Shoes should fit snugly without curling your toes too much.</p>
    <p>Try several brands: every brand fits a different foot shape.</p>` },
  '/blog/climbing-in-denver': { title: 'A week of climbing in Denver', body: `
    <h1>A week of climbing in Denver</h1>
    <p>Our head coach Maya spent a week climbing in Denver and Boulder, Colorado, this spring.</p>
    <p>She visited four gyms there and came back with ideas for our youth team. The sandstone at Eldorado Canyon was the highlight.</p>` },
  '/blog/member-spotlight': { title: 'Member spotlight: Jen', body: `
    <h1>Member spotlight: Jen</h1>
    <p>Jen started climbing at 52 and now leads 5.11 routes. She climbs three times a week, usually at six in the morning.</p>` },
  '/blog/finger-injuries': { title: 'Looking after your fingers', body: `
    <h1>Looking after your fingers</h1>
    <p>Finger pulley injuries are common among climbers. Rest for at least two weeks if a finger hurts when you grip, and see a doctor.</p>` },
  '/blog/new-training-board': { title: 'Our new training board', body: `
    <h1>Our new training board</h1>
    <p>Eastside opened a 45-degree training board in March 2025. It has over 2,000 problems in its app.</p>` },
};

/** Serves the site on 127.0.0.1 (random port). */
export function startAnswersSite(): Promise<AnswersSite> {
  return serveSite({ brand: 'Cedar &amp; Pine Climbing', nav: NAV, pages: PAGES });
}
