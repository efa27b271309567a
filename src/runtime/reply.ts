import { captureFrom, askedField, askFor, fieldLabel, nextField, timesAsked } from './capture.ts';
import { composeAnswer, type Answer } from '../answers/answer.ts';
import { analyzeQuestion, type Question } from '../answers/analysis.ts';
import { questionParts } from '../answers/parts.ts';
import { citationLines } from '../answers/citations.ts';
import { guardrailHit } from './guardrails.ts';
import { defaultCountry, withoutEmails, type ParseContext } from './parsers.ts';
import { greetingFor, pageLanguage, phrasesFor, renderTemplate, type SteerTopic } from '../answers/phrases.ts';
import {
  AFFIRMATIVE, agentSide, BOOKING, DECLINE_FIELD, GOODBYE, GREETING_ONLY, HANDOFF_REQUEST, isQuestion, NEGATIVE, THANKS, visitorSide,
} from './signals.ts';
import { fold, lastIndexOf } from '../answers/text.ts';
import { outboundIntent, outboundReply, replyLanguage } from './outbound.ts';
import type { RuntimeTools, ToolCall, TurnInput, TurnResult } from './types.ts';

/**
 * The offline reply policy: one visitor turn, in order of precedence: a person asked for or
 * declined, a data answer, small talk, a guardrail, an answer from knowledge, an honest "I don't
 * know" with the way forward.
 */

function steerTopic(goals: string[] | null): SteerTopic | null {
  for (const goal of goals ?? []) {
    const f = fold(goal);
    if (/\bdemo|demonstration/.test(f)) return 'demo';
    if (/\b(book|appointment|meeting|schedule|rendez-vous|reserv)/.test(f)) return 'booking';
    if (/\b(contact|call ?back|lead|rappel|recontact)/.test(f)) return 'contact';
  }
  return null;
}

/** What a visitor's message is looked up by (training notes, data tables, knowledge): no email address, single spaces, 500 characters. */
const queryOf = (text: string) => withoutEmails(text).replace(/\s+/g, ' ').trim().slice(0, 500);

/**
 * The question `said` would be read as, read now (issue 44): a streamed call has its caller's words before the silence
 * that ends the turn is over, and reads them while it waits, so that the turn finds the reading done (the engine keeps
 * its last readings, `analyzeQuestion`). The turn's reply is the same, read ahead or not; words that turn out not to
 * end the turn were read for nothing.
 */
export function readAhead(said: string): Question {
  return analyzeQuestion(queryOf(said.trim()).slice(0, 1000));
}

export async function replyOffline(input: TurnInput, tools: RuntimeTools, now: () => Date): Promise<TurnResult> {
  const { agent, messages } = input;
  const lang = pageLanguage(input.language || agent.default_language);
  const p = phrasesFor(lang, agent.style?.formality);
  const captured = { ...input.captured };
  const toolCalls: ToolCall[] = [];
  const record = (name: string, args: Record<string, unknown>) => toolCalls.push({ name, args, ts: now().toISOString() });
  const lastVisitorIndex = lastIndexOf(messages, visitorSide);
  const visitor = messages[lastVisitorIndex];
  if (!visitor?.text.trim()) return { replies: [greetingFor(agent, lang, input.contactFacts)], toolCalls, captured };

  const schema = agent.data_schema ?? [];
  const lastAgent = messages[lastIndexOf(messages.slice(0, lastVisitorIndex), agentSide)]?.text;
  const asked = askedField(schema, lastAgent);
  const ctx: ParseContext = { lang, country: defaultCountry(agent, lang), now: now() };
  const captures = captureFrom(schema, visitor.text, asked, captured, ctx);
  for (const c of captures) {
    captured[c.field] = c.value;
    record('capture_data', { field: c.field, value: c.value });
  }

  const text = visitor.text.trim();
  const f = fold(text);
  const question = isQuestion(text);
  const skip = new Set<string>();
  const parts: string[] = [];
  const followUp = (fallback: string | null) => {
    const next = nextField(schema, captured, messages, skip);
    const topic = steerTopic(agent.goals);
    const steered = topic !== null && messages.some((m) => agentSide(m) && m.text.includes(p.steer[topic!]));
    if (next) parts.push(topic && !steered && !captures.length ? `${p.steer[topic]} ${askFor(next, lang)}` : askFor(next, lang));
    else if (topic && !steered && !captures.length && topic !== 'contact' && schema.length === 0) parts.push(p.steer[topic]);
    else if (fallback) parts.push(fallback);
  };
  const done = () => ({ replies: [parts.join(' ')], toolCalls, captured });

  // A call the agent placed: "hello?", "who is this?" and "why are you calling?" get who calls and why; the
  // answers that end such a call get their closing (the campaign side ends the call and records why).
  if (agent.outbound) {
    const intent = outboundIntent(text);
    if (intent) {
      parts.push(outboundReply(intent, agent, agent.outbound, replyLanguage(text, input.language)));
      return done();
    }
    if (GOODBYE.test(f)) {
      parts.push(lang === 'fr' ? 'Merci de votre temps. Au revoir.' : 'Thank you for your time. Goodbye.');
      return done();
    }
  }

  // A yes/no to our offer of a person, or an explicit request for one.
  const offeredTransfer = lastAgent !== undefined && (lastAgent.includes(p.offerTransfer) || lastAgent.includes(p.declineTransfer));
  if ((offeredTransfer && AFFIRMATIVE.test(f)) || (HANDOFF_REQUEST.test(f) && !captures.length)) {
    if (agent.can_transfer) parts.push(p.handoffYes);
    else {
      parts.push(p.handoffNo);
      const contact = nextField(schema.filter((x) => x.type === 'email' || x.type === 'phone').map((x) => ({ ...x, required: true })), captured, messages, skip);
      parts.push(contact ? p.contactFollowUp(askFor(contact, lang)) : p.offerContact);
    }
    return done();
  }
  if (offeredTransfer && NEGATIVE.test(f) && !question) {
    parts.push(p.declineHandoff);
    followUp(p.anythingElse);
    return done();
  }

  // An answer to the field we asked for: noted, unreadable, or declined.
  if (captures.length && !question) {
    const labels = captures.map((c) => schema.find((x) => x.name === c.field)).filter((x) => x !== undefined).map((x) => fieldLabel(x, lang));
    // "your whether you are a customer" would not read: name the fields only when they are nouns.
    parts.push(p.noted(labels.length <= 2 && labels.every((l) => !/^(whether|if|si)\b/i.test(l)) ? labels : []));
    followUp(p.anythingElse);
    return done();
  }
  if (asked && !captures.length && !question) {
    if (DECLINE_FIELD.test(f) && asked.type !== 'boolean') {
      skip.add(asked.name);
      parts.push(p.skipped(fieldLabel(asked, lang)));
      followUp(p.anythingElse);
      return done();
    }
    const looksLikeAttempt = /[@\d]/.test(text) || text.split(/\s+/).length <= 4;
    if (looksLikeAttempt && asked.type !== 'string' && timesAsked(asked, messages) < 2) {
      parts.push(asked.type === 'boolean' ? askFor(asked, lang) : `${p.notUnderstood(fieldLabel(asked, lang))} ${askFor(asked, lang)}`);
      return done();
    }
  }

  if (GREETING_ONLY.test(f)) {
    parts.push(p.greetingBack);
    return done();
  }
  if (!question && THANKS.test(f) && text.split(/\s+/).length <= 6) {
    parts.push(p.thanks);
    return done();
  }
  if (!question && GOODBYE.test(f)) {
    parts.push(p.goodbye);
    return done();
  }

  // A rule may name the business through its variables ("Never discuss {{competitor}}").
  const hit = guardrailHit(agent.guardrails?.map((g) => renderTemplate(g, agent, input.contactFacts)) ?? null, text);
  if (hit) {
    parts.push(p.decline(hit.rule), agent.can_transfer ? p.declineTransfer : p.offerContact);
    return done();
  }

  const query = queryOf(text);
  // What the business taught the agent comes first, as it wrote it, with no source link. The data rows are read meanwhile
  // (issue 39: one read's wait instead of two in a row); they count only when no note answers, nor does their failure.
  const rowRead = tools.lookupRows?.(query);
  rowRead?.catch(() => {});
  const notes = tools.searchNotes ? await tools.searchNotes(query) : [];
  if (notes[0]) {
    record('search_training_notes', { query, note_question: notes[0].question });
    parts.push(notes[0].answer.trim());
    followUp(null);
    return done();
  }
  const row = rowRead ? await rowRead : null;
  if (row) {
    record('lookup_data_tables', { query, table: row.table });
    parts.push(row.text);
    followUp(null);
    return done();
  }
  // A story before the question, or two questions at once: each part that asks is answered, read with the story (and a
  // part that needs the one before it, read with it); the whole message when no part is answered.
  const { asks, story } = questionParts(query);
  const split = asks.length > 1 || story !== '';
  record('search_knowledge', split ? { query, parts: asks } : { query });
  const answers: Answer[] = [];
  if (split) {
    for (const [i, ask] of asks.entries()) {
      // A later part is read with the one before it as its circumstances: what its "it" is, what it is asked of
      // ("how much for balayage and how long will i be in the chair").
      const told = i > 0 ? [story, asks[i - 1]].filter(Boolean).join('. ') : story;
      let found = composeAnswer(ask, await tools.searchKnowledge(ask, 5, { story: told, message: query }));
      if (!found && i > 0) {
        const joined = `${asks[i - 1]} ${ask}`;
        found = composeAnswer(joined, await tools.searchKnowledge(joined, 5, { story, message: query }));
      }
      if (found && !answers.some((a) => a.text === found.text)) answers.push(found);
    }
  }
  const answer: Answer | null = answers.length
    ? { text: answers.map((a) => a.text).join(' '), urls: [...new Set(answers.flatMap((a) => a.urls))] }
    : composeAnswer(query, await tools.searchKnowledge(query, 5));
  if (answer) {
    parts.push(`${answer.text}\n${citationLines(answer.urls, p.source)}`);
    followUp(null);
    return done();
  }
  // Asking to book with fields to fill: that is the way forward, not an apology.
  if (BOOKING.test(f) && nextField(schema, captured, messages, skip)) {
    parts.push(p.happyToHelp);
    followUp(null);
    return done();
  }
  parts.push(p.dontKnow);
  if (agent.can_transfer) parts.push(p.offerTransfer);
  else {
    const next = nextField(schema, captured, messages, skip);
    parts.push(next ? p.contactFollowUp(askFor(next, lang)) : p.offerContact);
  }
  return done();
}

