import { describe, expect, it } from 'vitest';
import { callbackTime, openingLine, outboundIntent } from './outbound.ts';
import { fold } from '../answers/text.ts';
import { systemPrompt } from './llm.ts';
import { spokenText } from './voice.ts';
import type { RuntimeAgent } from './types.ts';

const agent: RuntimeAgent = {
  id: 'a', name: 'Sam', persona: null, greeting: 'Hi! How can I help you today?', guardrails: null, goals: null, acceptance_criteria: null,
  data_schema: null, default_language: 'en', config_variables: { business_name: 'Acme Dental' }, can_transfer: false,
};
const call = { objective: 'to confirm your appointment tomorrow', opening_line: null, voicemail_message: null };

describe('a call the agent placed (issue 43)', () => {
  it('reads a cold call\'s usual answers, in English and French, whatever the trade', () => {
    const kinds = (lines: string[]) => lines.map((l) => outboundIntent(l)?.kind ?? null);
    expect(kinds(['Who is this?', 'Hello, who is calling?', 'Why are you calling me?', 'What is this about?', "Qui est à l'appareil ?", 'C\'est à quel sujet ?', 'Pourquoi vous m\'appelez ?']))
      .toEqual(Array(7).fill('identify'));
    expect(kinds(["I'm not interested", 'No thanks.', 'Ça ne m\'intéresse pas.', 'Non merci']))
      .toEqual(Array(4).fill('not_interested'));
    expect(kinds(['Take me off your list', "Don't call me again", 'Please stop calling me', 'Put me on your do not call list', 'Ne me rappelez plus jamais', 'Retirez-moi de votre liste']))
      .toEqual(Array(6).fill('do_not_call'));
    expect(kinds(['Call me later', 'Can you call me back at 5?', 'Not a good time, call me tomorrow', 'Rappelez-moi plus tard', 'Je suis occupé, rappelez-moi à 17h']))
      .toEqual(Array(5).fill('callback'));
    expect(kinds(['Hello?', 'Hello! Hello??', 'Allô ?', 'Yes?'])).toEqual(Array(4).fill('identify'));
    expect(kinds(['What are your opening hours?', 'Yes, that works for me', 'How much is a cleaning?'])).toEqual([null, null, null]);
  });

  it('hears when to call back: "at 5" is the afternoon, "5 am" is not, "à 17h30", "in 2 hours"', () => {
    expect(callbackTime(fold('call me back at 5'))).toEqual({ hour: 17, minute: 0 });
    expect(callbackTime(fold('call me at 5:30 am'))).toEqual({ hour: 5, minute: 30 });
    expect(callbackTime(fold('rappelez-moi à 17h30'))).toEqual({ hour: 17, minute: 30 });
    expect(callbackTime(fold('call me back in 2 hours'))).toEqual({ inSeconds: 7200 });
    expect(callbackTime(fold('call me later'))).toBeNull();
  });

  it('opens with who calls, for which business and why; a campaign opening_line is rendered instead', () => {
    expect(openingLine(agent, call, 'en', {})).toBe('Hello, this is Sam from Acme Dental. I\'m calling to confirm your appointment tomorrow. Do you have a moment?');
    expect(openingLine(agent, { ...call, objective: 'pour confirmer votre rendez-vous' }, 'fr', { first_name: 'Ana' }))
      .toBe('Bonjour Ana, ici Sam de Acme Dental. Je vous appelle pour confirmer votre rendez-vous. Avez-vous un instant ?');
    expect(openingLine(agent, { ...call, opening_line: 'Hi {{first_name}}, {{agent_name}} from {{business_name}} here.' }, 'en', { first_name: 'Ana' }))
      .toBe('Hi Ana, Sam from Acme Dental here.');
  });

  it('the LLM runtime is told it placed the call, and why', () => {
    const prompt = systemPrompt({ ...agent, outbound: call }, { language: 'en', contactFacts: {} }, {});
    expect(prompt).toContain('phone call that YOU placed');
    expect(prompt).toContain('The objective of this call: to confirm your appointment tomorrow.');
    expect(prompt).not.toContain('Source: <url>');
    expect(systemPrompt(agent, { language: 'en', contactFacts: {} }, {})).toContain('Source: <url>');
  });
});

describe('spoken text (issue 43, "Voice")', () => {
  it('never speaks a URL or a Source line; one or two short sentences a turn', () => {
    expect(spokenText('We open at 9 on weekdays.\nSource: https://example.com/hours', 'en')).toBe('We open at 9 on weekdays.');
    expect(spokenText('Our prices are listed at https://example.com/pricing.', 'en')).toBe('Our prices are listed on our website.');
    expect(spokenText('Nos tarifs sont sur https://example.fr/tarifs.\nSources : https://a.fr, https://b.fr', 'fr')).toBe('Nos tarifs sont sur notre site.');
    // An uploaded file's citation line (issue 46) is not read aloud; a parenthesis inside a sentence stays.
    expect(spokenText('A loaf costs $6.\n(Price list, page 2)', 'en')).toBe('A loaf costs $6.');
    expect(spokenText('Open daily (except Mondays).', 'en')).toBe('Open daily (except Mondays).');
    const long = 'We deliver to every address in the city and in the surrounding towns. It usually takes two working days from the moment you place the order. '
      + 'Shipping is free above fifty dollars.';
    expect(spokenText(`**Yes.** ${long} What is your email?`, 'en')).toBe('Yes. What is your email?');
    expect(spokenText(long, 'en')).toBe('We deliver to every address in the city and in the surrounding towns. It usually takes two working days from the moment you place the order.');
    expect(spokenText('We deliver. It takes two days. Shipping is free.', 'en')).toBe('We deliver. It takes two days. Shipping is free.');
  });
});
