import { describe, expect, it } from 'vitest';
import { CALLER_GOODBYE, createScriptedCaller } from './caller.ts';

const GOAL = 'Ask about opening hours and the refund policy. Then ask "Do you deliver to Lyon?" You want to book a demo. '
  + 'My name is Ana Ruiz, my email is ana@example.com, my order number is A-1234.';

/** The caller's lines against a list of agent turns (the opening first). */
function play(goal: string, agentTurns: string[], maxTurns?: number): (string | null)[] {
  const caller = createScriptedCaller({ goal, maxTurns });
  return [caller.opening(), ...agentTurns.map((text, i) => caller.reply(text, i + 2))];
}

describe('createScriptedCaller', () => {
  it('asks what its goal needs, in order, answers from its facts, then says goodbye and hangs up', () => {
    expect(play(GOAL, [
      'We open at 9am. Anything else?',
      'Refunds within 30 days. Can I have your email please?',
      'Thanks! What is your order number?',
      'Yes, we deliver to Lyon.',
      'Sure, what is your name?',
      'Booked for Tuesday.',
      'Have a nice day.',
    ])).toEqual([
      'Hello! Can you tell me about opening hours?',
      'Can you tell me about your refund policy?',
      'My email is ana@example.com.',
      'My order number is A-1234.',
      'Do you deliver to Lyon?',
      'My name is Ana Ruiz.',
      'I would like to book a demo.',
      CALLER_GOODBYE,
    ]);
  });

  it('hangs up after its goodbye and after maxTurns, and says when its goal is met', () => {
    const caller = createScriptedCaller({ goal: 'Ask "Are you open on Sunday?"', maxTurns: 5 });
    expect(caller.opening()).toBe('Hello! Are you open on Sunday?');
    expect(caller.goalMet?.()).toBe(false);
    expect(caller.reply('No, we are closed on Sundays.', 2)).toBe(CALLER_GOODBYE);
    expect(caller.goalMet?.()).toBe(true);
    expect(caller.reply('Goodbye!', 3)).toBeNull();
    const chatty = createScriptedCaller({ goal: 'Ask about prices, delivery, returns, warranty and stock', maxTurns: 3 });
    chatty.opening();
    expect(chatty.reply('x', 2)).not.toBeNull();
    expect(chatty.reply('x', 3)).not.toBeNull();
    expect(chatty.reply('x', 4)).toBeNull();
    expect(chatty.goalMet?.()).toBe(false);
  });

  it('states a goal with nothing to ask as its opening; uses its persona for facts; gives a fact at most twice', () => {
    const caller = createScriptedCaller({ goal: 'Complain about a late parcel', persona: 'I am Marc Dupont, phone +33 6 12 34 56 78' });
    expect(caller.opening()).toBe('Hello! Complain about a late parcel.');
    const pushy = createScriptedCaller({ goal: 'Ask about pricing. Ask about delivery', persona: 'My name is Marc Dupont' });
    pushy.opening();
    expect(pushy.reply('What is your name?', 2)).toBe('My name is Marc Dupont.');
    expect(pushy.reply('Sorry, your name again?', 3)).toBe('My name is Marc Dupont.');
    expect(pushy.reply('And your name?', 4)).toBe('Can you tell me about delivery?');
    expect(createScriptedCaller({ goal: 'x', persona: 'my phone is +33 6 12 34 56 78' }).reply('What phone number can we call you on?', 2))
      .toBe('My phone number is +33 6 12 34 56 78.');
  });

  it('turns "you want to know X" into a question about X, not a recital of its script', () => {
    const lines = play('You want to know the opening hours. Your name is Ana and your email is ana@example.com.', ['We open at 9am every day.']);
    expect(lines[0]).toBe('Hello! Can you tell me your opening hours?');
    expect(lines[1]).toBe(CALLER_GOODBYE);
  });

  it('yields every ask of a scenario written as prose (issue 43), in order', () => {
    const ok = Array.from({ length: 5 }, () => 'Sure, happy to help with that.');
    expect(play("You are Mia, a customer who bought a lawn mower last week. You'd like to know how long delivery takes to Lyon, "
      + "and you're also curious whether they offer refunds on opened items. Finally, ask for the store's opening hours. Your email is mia@example.com.", ok).slice(0, 4))
      .toEqual(['Hello! Can you tell me how long delivery takes to Lyon?', 'Can you tell me whether you offer refunds on opened items?',
        'Can you tell me about your opening hours?', CALLER_GOODBYE]);
    expect(play('The caller is a new patient. She wonders if the clinic accepts walk-ins, then asks them about parking and the bus stop. '
      + 'She also wants to book a first appointment for next Tuesday.', ok).slice(0, 5))
      .toEqual(['Hello! Can you tell me if you accept walk-ins?', 'Can you tell me about parking?', 'Can you tell me about your bus stop?',
        'I would like to book a first appointment for next Tuesday.', CALLER_GOODBYE]);
    expect(play('You run a small café and are interested in bulk coffee pricing. Find out whether they deliver on weekends and check if there is a minimum order.', ok).slice(0, 4))
      .toEqual(['Hello! Can you tell me about bulk coffee pricing?', 'Can you tell me whether you deliver on weekends?', 'Can you tell me if there is a minimum order?', CALLER_GOODBYE]);
  });

  it('is deterministic: the same script and agent turns give the same lines', () => {
    const turns = ['Hello, what is your email?', 'Refunds take 30 days.', 'Anything else?'];
    expect(play(GOAL, turns)).toEqual(play(GOAL, turns));
  });
});
