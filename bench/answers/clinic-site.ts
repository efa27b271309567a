import { serveSite, table, type AnswersSite, type Page } from './serve.ts';

/**
 * The second fixture of the answers evaluation, written before the ranking was tuned on it:
 * Brightwater Dental, a dental practice with two offices. 33 pages: fees and opening hours in
 * tables, services, a team page, an FAQ, insurance and payment policies, lists, patient reviews
 * and a blog whose posts mention prices, durations, places and people that are not the
 * practice's answers (distractions).
 */

const NAV = [['/', 'Home'], ['/services', 'Services'], ['/fees', 'Fees'], ['/hours', 'Hours'], ['/offices', 'Offices'],
  ['/team', 'Our dentists'], ['/new-patients', 'New patients'], ['/faq', 'FAQ'], ['/blog', 'Blog'], ['/contact', 'Contact']] as const;

const PAGES: Record<string, Page> = {
  '/': { title: 'Brightwater Dental', body: `
    <h1>Family dentistry in Madison, Wisconsin</h1>
    <p>Brightwater Dental looks after patients of all ages at two offices in Madison: Downtown and West.</p>
    <p>We are welcoming new patients. Book online or give us a call.</p>
    <h2>What we do</h2>
    <ul><li>Checkups and cleanings</li><li>Fillings and crowns</li><li>Implants</li><li>Clear aligners</li><li>Whitening</li><li>Children's dentistry</li></ul>` },
  '/about': { title: 'About the practice', body: `
    <h1>About Brightwater Dental</h1>
    <p>Dr. Helen Park opened Brightwater Dental in 2009 after twelve years in a hospital dental clinic.</p>
    <p>The West office opened in 2021. Today three dentists and six hygienists care for about 5,000 patients.</p>
    <h2>Languages</h2>
    <p>Besides English, our team speaks Spanish and Vietnamese.</p>` },
  '/offices': { title: 'Our offices', body: `
    <h1>Our offices</h1>
    <p>Both offices are in Madison, Wisconsin, and share one patient record, so you can visit either.</p>
    <h2>Downtown</h2>
    <p>215 State Street, Suite 300, Madison, WI 53703.</p>
    <p>Park in the Capitol Square ramp across the street; we validate tickets for two hours.</p>
    <h2>West</h2>
    <p>7010 Mineral Point Road, Madison, WI 53717.</p>
    <p>The West office has its own free lot and is served by bus route 2.</p>` },
  '/hours': { title: 'Office hours', body: `
    <h1>Office hours</h1>
    ${table(['Day', 'Downtown', 'West'], [
      ['Monday to Thursday', '7:30 am – 6 pm', '8 am – 5 pm'],
      ['Friday', '7:30 am – 2 pm', 'Closed'],
      ['Saturday', 'Closed', '8 am – 12 pm'],
      ['Sunday', 'Closed', 'Closed'],
    ])}
    <h2>Holidays</h2>
    <p>Both offices are closed on Memorial Day, Independence Day, Labor Day, Thanksgiving and Christmas Day.</p>` },
  '/fees': { title: 'Fees', body: `
    <h1>Fees for patients without insurance</h1>
    ${table(['Treatment', 'Fee'], [
      ['New patient exam with X-rays', '$149'],
      ['Adult cleaning', '$115'],
      ['Child cleaning (under 14)', '$85'],
      ['Tooth-colored filling', 'from $160'],
      ['Porcelain crown', '$1,150'],
      ['In-office whitening', '$399'],
      ['Take-home whitening trays', '$249'],
      ['Emergency exam', '$95'],
    ])}
    <p>Fees for patients with insurance depend on your plan. We give you a written estimate before any treatment over $300.</p>` },
  '/insurance': { title: 'Insurance', body: `
    <h1>Dental insurance</h1>
    <p>We are in network with Delta Dental, Cigna, MetLife and Guardian.</p>
    <p>We file claims for you with every PPO plan, including out-of-network ones. You pay only your share at the visit.</p>
    <p>We do not accept BadgerCare Plus or other Medicaid plans.</p>` },
  '/savings-plan': { title: 'Brightwater savings plan', body: `
    <h1>Brightwater savings plan</h1>
    <p>No insurance? Our in-house plan costs $299 a year for adults and $199 a year for children.</p>
    <ul><li>Two exams and two cleanings a year</li><li>All routine X-rays</li><li>15% off every other treatment</li></ul>
    <p>The plan starts the day you sign up; there is no waiting period.</p>` },
  '/services': { title: 'Services', body: `
    <h1>Services</h1>
    <p>From routine checkups to implants, most treatment happens in our own offices.</p>
    <ul><li><a href="/services/cleanings">Checkups and cleanings</a></li><li><a href="/services/whitening">Whitening</a></li>
    <li><a href="/services/implants">Implants</a></li><li><a href="/services/aligners">Clear aligners</a></li>
    <li><a href="/services/children">Children's dentistry</a></li><li><a href="/services/emergencies">Emergencies</a></li>
    <li><a href="/services/sedation">Sedation</a></li></ul>` },
  '/services/cleanings': { title: 'Checkups and cleanings', body: `
    <h1>Checkups and cleanings</h1>
    <p>We recommend a checkup and cleaning every six months. A routine cleaning takes about 45 minutes.</p>
    <p>Our hygienists use ultrasonic scalers and polish with a fluoride paste.</p>` },
  '/services/whitening': { title: 'Whitening', body: `
    <h1>Teeth whitening</h1>
    <p>In-office whitening takes one visit of about 90 minutes and lightens teeth by several shades.</p>
    <p>Take-home trays are made from a mould of your teeth; you wear them 30 minutes a day for two weeks.</p>
    <p>We do not whiten teeth for patients under 16.</p>` },
  '/services/implants': { title: 'Dental implants', body: `
    <h1>Dental implants</h1>
    <p>Your first implant consultation is free, including a 3D scan.</p>
    <p>From placement to the final crown, an implant usually takes three to six months while the bone heals.</p>
    <p>Implants are placed by Dr. Helen Park at the Downtown office.</p>` },
  '/services/aligners': { title: 'Clear aligners', body: `
    <h1>Clear aligners</h1>
    <p>Dr. Amara Osei, our orthodontist, straightens teeth with Invisalign clear aligners.</p>
    <p>Treatment lasts 12 to 18 months for most adults and starts at $4,800.</p>
    <p>You wear the aligners about 22 hours a day and switch to a new set every two weeks.</p>` },
  '/services/children': { title: "Children's dentistry", body: `
    <h1>Children's dentistry</h1>
    <p>Dr. Sam Ruiz, our pediatric dentist, sees children from their first birthday to age 16.</p>
    <p>Bring your child for a first visit by age one, or within six months of the first tooth.</p>
    <p>Sealants protect the back teeth of children from age six and cost $45 per tooth.</p>` },
  '/services/emergencies': { title: 'Dental emergencies', body: `
    <h1>Dental emergencies</h1>
    <p>Broken tooth, swelling or bad toothache? Call before 10 am and we will see you the same day.</p>
    <p>Outside office hours, our on-call dentist answers at (608) 555-0199.</p>
    <p>For a knocked-out tooth, keep it in milk and come in within an hour.</p>` },
  '/services/sedation': { title: 'Sedation', body: `
    <h1>Sedation for nervous patients</h1>
    <p>Nitrous oxide is available at both offices for $60 per visit and wears off within minutes, so you can drive home.</p>
    <p>Oral sedation is available at the Downtown office; you need someone to drive you home afterwards.</p>` },
  '/team': { title: 'Our dentists and team', body: `
    <h1>Meet the team</h1>
    <h2>Dr. Helen Park, Founder and General Dentist</h2><p>Helen does crowns, implants and general dentistry at the Downtown office.</p>
    <h2>Dr. Sam Ruiz, Pediatric Dentist</h2><p>Sam treats our youngest patients at the West office.</p>
    <h2>Dr. Amara Osei, Orthodontist</h2><p>Amara leads our clear aligner treatments at both offices.</p>
    <h2>Kim Tran, Lead Hygienist</h2><p>Kim trains our hygiene team and runs the Saturday clinic.</p>
    <h2>Rachel Burke, Office Manager</h2><p>Rachel handles billing and insurance questions.</p>` },
  '/new-patients': { title: 'New patients', body: `
    <h1>New patients</h1>
    <p>Fill in the health history form online before your visit, and arrive 15 minutes early.</p>
    <p>Please bring a photo ID, your insurance card and a list of the medicines you take.</p>
    <p>Your first visit takes about 75 minutes: an exam, X-rays, a cleaning and a treatment plan.</p>` },
  '/booking': { title: 'Book an appointment', body: `
    <h1>Book an appointment</h1>
    <p>Book online at any hour, or call the front desk during office hours.</p>
    <p>You can book up to three months ahead. We send a text reminder two days before your visit.</p>` },
  '/policies/cancellation': { title: 'Cancellation policy', body: `
    <h1>Cancellation policy</h1>
    <p>Please give us at least 48 hours' notice if you need to cancel or move an appointment.</p>
    <p>Cancelling with less notice, or not showing up, costs $50.</p>
    <p>After three missed appointments we may ask you to pay a deposit to book.</p>` },
  '/policies/payment': { title: 'Payment', body: `
    <h1>Payment</h1>
    <p>Payment is due at the time of your visit.</p>
    <p>We accept cash, all major credit and debit cards, and HSA and FSA cards. We do not take personal checks.</p>
    <p>For larger treatment, CareCredit lets you spread the cost over 6 or 12 months with no interest.</p>` },
  '/policies/privacy': { title: 'Privacy', body: `
    <h1>Privacy</h1>
    <p>We keep your health information private as the HIPAA rules require. Our full notice of privacy practices is available at the front desk.</p>` },
  '/contact': { title: 'Contact us', body: `
    <h1>Contact</h1>
    <p>Front desk: (608) 555-0173, Monday to Friday during office hours. You can also text that number.</p>
    <p>Email frontdesk@brightwater.example; we answer within one business day.</p>
    <p>For bills and statements, write to billing@brightwater.example.</p>` },
  '/faq': { title: 'Frequently asked questions', body: `
    <h1>FAQ</h1>
    <h3>Do you see children?</h3><p>Yes, Dr. Ruiz sees children from age one at the West office.</p>
    <h3>Is there Wi-Fi in the waiting room?</h3><p>Yes, both offices have free Wi-Fi.</p>
    <h3>Can I get a weekend appointment?</h3><p>The West office is open on Saturday mornings. We are closed on Sundays.</p>
    <h3>Do you use amalgam fillings?</h3><p>No, all our fillings are tooth-colored composite.</p>
    <h3>Can I watch TV during my visit?</h3><p>Every treatment chair has a ceiling screen with streaming channels and headphones.</p>` },
  '/accessibility': { title: 'Accessibility', body: `
    <h1>Accessibility</h1>
    <p>The Downtown office is on the third floor; an elevator goes to every floor.</p>
    <p>The West office is on one level with step-free access and an accessible restroom.</p>` },
  '/careers': { title: 'Careers', body: `
    <h1>Careers</h1>
    <p>We are hiring a dental assistant and a front desk coordinator. Send your CV to jobs@brightwater.example.</p>
    <p>Staff get free dental care for themselves and their families.</p>` },
  '/reviews': { title: 'Patient reviews', body: `
    <h1>What patients say</h1>
    <p>"Dr. Park fixed my chipped tooth in twenty minutes and I felt nothing." — Mark, Verona</p>
    <p>"My daughter loves the treasure chest after her visits." — Linh, Fitchburg</p>
    <p>"I paid $2,000 less for my aligners than at my old orthodontist in Chicago." — Dave, Middleton</p>` },
  '/blog': { title: 'Blog', body: `
    <h1>Blog</h1>
    <ul>
      <li><a href="/blog/flossing">Why flossing matters</a></li>
      <li><a href="/blog/whitening-myths">Five whitening myths</a></li>
      <li><a href="/blog/conference-chicago">Notes from a conference in Chicago</a></li>
      <li><a href="/blog/halloween">Surviving Halloween candy</a></li>
      <li><a href="/blog/sports-guards">Mouthguards for young athletes</a></li>
      <li><a href="/blog/coffee">Does coffee stain your teeth?</a></li>
    </ul>` },
  '/blog/flossing': { title: 'Why flossing matters', body: `
    <h1>Why flossing matters</h1>
    <p>Brush twice a day for two minutes and floss once a day. Flossing reaches the third of each tooth a brush cannot.</p>
    <p>A water flosser costs around $50 and works well for people with braces.</p>` },
  '/blog/whitening-myths': { title: 'Five whitening myths', body: `
    <h1>Five whitening myths</h1>
    <p>Drugstore strips cost about $40 and take several weeks to show results.</p>
    <p>Charcoal toothpaste does not whiten teeth and can wear down enamel.</p>` },
  '/blog/conference-chicago': { title: 'Notes from a conference in Chicago', body: `
    <h1>Notes from a conference in Chicago</h1>
    <p>Dr. Osei spent four days at the Midwest orthodontics meeting in Chicago this spring.</p>
    <p>She met Dr. Raj Patel, who runs a practice in Milwaukee, and came back with ideas for faster aligner checkups.</p>` },
  '/blog/halloween': { title: 'Surviving Halloween candy', body: `
    <h1>Surviving Halloween candy</h1>
    <p>Let children eat sweets with a meal rather than all day long, and brush an hour later.</p>
    <p>Sticky caramels are the worst for teeth; chocolate rinses away faster.</p>` },
  '/blog/sports-guards': { title: 'Mouthguards for young athletes', body: `
    <h1>Mouthguards for young athletes</h1>
    <p>A store-bought mouthguard costs $15 to $30. Custom guards fit better and protect teeth in hockey and football.</p>
    <p>Replace a child's guard every season as the mouth grows.</p>` },
  '/blog/coffee': { title: 'Does coffee stain your teeth?', body: `
    <h1>Does coffee stain your teeth?</h1>
    <p>Yes, coffee and tea stain enamel over time. Drinking water afterwards and a cleaning twice a year keep stains down.</p>` },
};

/** Serves the site on 127.0.0.1 (random port). */
export function startClinicSite(): Promise<AnswersSite> {
  return serveSite({ brand: 'Brightwater Dental', nav: NAV, pages: PAGES });
}
