import { describe, expect, it } from 'vitest';
import { framedReply, newWordsOf } from './reply-text.ts';

const Q = 'Do you deliver on Sundays?';

// Shapes seen in real mail: phone clients, Gmail and Outlook quoting, corporate signatures and notices.
const SHAPES: [string, string][] = [
  ['a closing and a name on two lines', `Hi,\n\n${Q}\n\nThanks,\nMia`],
  ['a closing and a name on one line', `${Q}\n\nThanks, Mia`],
  ['a closing with "!" and no name', `${Q}\nThanks!`],
  ['a phone footer', `${Q}\n\nSent from my iPhone`],
  ['an Android Outlook footer', `${Q}\n\nGet Outlook for Android`],
  ['a "-- " signature block', `${Q}\n\n-- \nMia Jones\nHead of Operations, Acme\n+1 555 0100`],
  ['a Gmail quote header', `${Q}\n\nOn Mon, Dec 1, 2026 at 10:00 AM Acme Support <help@acme.com> wrote:\n> We open at 9.\n> See you soon.`],
  ['an Outlook quoted header block', `${Q}\n\nFrom: Acme Support <help@acme.com>\nSent: Monday, December 1, 2026 10:00 AM\nTo: Mia <mia@example.org>\nSubject: Re: Delivery\n\nWe open at 9.`],
  ['a closing, a signature and a legal notice', `${Q}\n\nBest regards,\nMia Jones\nAcme Corp | +1 555 0100\n\nCONFIDENTIALITY NOTICE: This e-mail and any attachments are confidential and intended solely for the addressee. If you have received this e-mail in error, please notify the sender and delete it.`],
  ['a closing, a name and a phone footer', `${Q}\n\nKind regards\nMia\n\nSent from my Galaxy`],
  ['a French sign-off and quote', `${Q}\n\nCordialement,\nMia\n\nLe lun. 1 déc. 2026 à 10:00, Acme <help@acme.com> a écrit :\n> Bonjour`],
];

describe('newWordsOf: what the agent reads of a received mail', () => {
  for (const [shape, text] of SHAPES) {
    it(`strips ${shape}`, () => {
      expect(newWordsOf(text).replace(/^Hi,\n\n/, '')).toBe(Q);
    });
  }

  it('keeps the words of a message, thanks inside a sentence included', () => {
    expect(newWordsOf('Thanks! And on Sundays?')).toBe('Thanks! And on Sundays?');
    expect(newWordsOf('Thanks for the quick answer. Could you also deliver to Lyon next week?')).toBe('Thanks for the quick answer. Could you also deliver to Lyon next week?');
    expect(newWordsOf('Hello,\n\nI ordered two chairs.\nBest price you can do for a third?')).toBe('Hello,\n\nI ordered two chairs.\nBest price you can do for a third?');
  });

  it('keeps a message that is nothing but a sign-off', () => {
    expect(newWordsOf('Thanks, Mia')).toBe('Thanks, Mia');
  });
});

describe('framedReply: the agent\'s answer as a mail', () => {
  it('adds a salutation by first name and a closing with the inbox\'s name', () => {
    expect(framedReply({ body: 'We deliver on Sundays.', firstName: 'Mia', senderName: 'Acme Support', language: 'en' }))
      .toBe('Hello Mia,\n\nWe deliver on Sundays.\n\nBest regards,\nAcme Support');
    expect(framedReply({ body: 'We deliver on Sundays.', firstName: null, senderName: 'Acme Support', language: null }))
      .toBe('Hello,\n\nWe deliver on Sundays.\n\nBest regards,\nAcme Support');
    expect(framedReply({ body: 'Nous livrons le dimanche.', firstName: null, senderName: 'Acme', language: 'fr' }))
      .toBe('Bonjour,\n\nNous livrons le dimanche.\n\nCordialement,\nAcme');
  });

  it('does not greet twice', () => {
    expect(framedReply({ body: 'Hi there! We deliver on Sundays.', firstName: 'Mia', senderName: 'Acme', language: 'en' }))
      .toBe('Hi there! We deliver on Sundays.\n\nBest regards,\nAcme');
  });
});
