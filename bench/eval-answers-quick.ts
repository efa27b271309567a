/**
 * The answers evaluation without the service: `node scripts/run.mjs bench eval-answers-quick`.
 *
 * For tuning the ranking in seconds rather than minutes. Serves the three fixture sites of
 * `node scripts/run.mjs bench eval-answers-legacy`, follows their links, and runs the crawler's extraction and chunking,
 * `rankSentences` and `composeAnswer` in this process, then judges the replies as the real
 * evaluation does. It differs from it in two ways: every passage of a site is a candidate (the
 * service first picks 40 from PostgreSQL's full-text index), and the reply is the composed answer or
 * "I don't know" without the runtime's wording around it. Every figure worth reporting comes from
 * the service (`npm run eval:answers`, and the legacy evaluation for these three sites).
 *
 * Held-out questions (every fourth) are only counted: their questions, replies and scores are never
 * printed. Prints each tuning question answered wrong (EVAL_SHOW_ALL=1: every tuning question) with
 * its best score, then a calibration line: the tuning set's best-scoring unknown, the facts that
 * would be answered right at any threshold above it, and the lowest of them; ANSWER_THRESHOLD belongs
 * between the two. EVAL_FIXTURE=gym, =clinic or =bakery runs one fixture. A question no sentence answers at
 * the threshold is read by meaning as `searchKnowledge` does (`answerByMeaning`); EVAL_MEANING=0 leaves that out.
 */
import { chunkSections } from '../src/crawler/chunk.ts';
import { extractHtml } from '../src/crawler/extract.ts';
import { analyzeQuestion } from '../src/answers/analysis.ts';
import { answerByMeaning } from '../src/answers/meaning.ts';
import { ANSWER_THRESHOLD, rankSentences, type RankedSentence, type SourceChunk } from '../src/answers/rank.ts';
import { composeAnswer } from '../src/answers/answer.ts';
import { startClinicSite } from './answers/clinic-site.ts';
import { CLINIC_QUESTIONS } from './answers/clinic-questions.ts';
import { startBakerySite } from './answers/bakery-site.ts';
import { BAKERY_QUESTIONS } from './answers/bakery-questions.ts';
import { isHeldOut, QUESTIONS, type Question } from './answers/questions.ts';
import type { AnswersSite } from './answers/serve.ts';
import { startAnswersSite } from './answers/site.ts';
import { say } from './harness.ts';

// The same judge as bench/eval-answers-legacy.ts.
const ADMITS = /(don'?t know|do not know|not sure|couldn'?t find|could not find|can'?t find|cannot find|does(n'?t| not) say|isn'?t on (our|the) (site|website)|not on (our|the) (site|website)|no information)/i;
const CITES = /\bsources?\s?:/i;
function judge(question: Question, reply: string): boolean {
  const admits = ADMITS.test(reply);
  if (question.kind === 'unknown') return admits && !CITES.test(reply);
  const matches = (question.expect ?? []).every((re) => re.test(reply));
  return question.kind === 'elsewhere' ? matches : matches && !admits;
}

/** Every page reachable from the home page, extracted and chunked as the crawl does. */
async function passages(start: () => Promise<AnswersSite>): Promise<SourceChunk[]> {
  const site = await start();
  try {
    const seen = new Set<string>();
    const queue = [`${site.url}/`];
    const out: SourceChunk[] = [];
    while (queue.length) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await fetch(url);
      if (!res.ok) continue;
      const page = extractHtml(await res.text(), url);
      queue.push(...page.links.filter((l) => l.startsWith(site.url) && !seen.has(l)));
      for (const c of chunkSections(page.text, page.title)) out.push({ text: c.text, section: c.section, url, title: page.title });
    }
    return out;
  } finally {
    await site.close();
  }
}

function reply(question: string, ranked: RankedSentence[], threshold: number, byMeaning: RankedSentence | null = null): string {
  const found = (byMeaning ? [byMeaning] : ranked.filter((r) => r.score >= threshold).slice(0, 5))
    .map((r) => ({ text: r.context, url: r.url, title: r.title, score: r.score, section: r.section, answer: r.sentence, missing: r.missing, absent: r.absent }));
  const answer = composeAnswer(question, found);
  return answer ? `${answer.text}\nSource: ${answer.urls[0]}` : "I don't know.";
}

const FIXTURES = [['gym', startAnswersSite, QUESTIONS], ['clinic', startClinicSite, CLINIC_QUESTIONS], ['bakery', startBakerySite, BAKERY_QUESTIONS]] as const;
const calibration: { score: number; unknown: boolean; rightIfAnswered: boolean }[] = [];
for (const [name, start, questions] of FIXTURES) {
  if (process.env.EVAL_FIXTURE && process.env.EVAL_FIXTURE !== name) continue;
  const chunks = await passages(start);
  const count = { tuning: { facts: 0, factsRight: 0, unknowns: 0, admitted: 0 }, held: { facts: 0, factsRight: 0, unknowns: 0, admitted: 0 } };
  for (const [index, question] of questions.entries()) {
    // As many sentences as searchKnowledge ranks (its CANDIDATES).
    const asked = analyzeQuestion(question.q);
    const ranked = rankSentences(asked, chunks, undefined, 40);
    const byMeaning = process.env.EVAL_MEANING !== '0' && !ranked.some((r) => r.score >= ANSWER_THRESHOLD) ? await answerByMeaning(asked, ranked) : null;
    const text = reply(question.q, ranked, ANSWER_THRESHOLD, byMeaning);
    const right = judge(question, text);
    const unknown = question.kind === 'unknown';
    const c = isHeldOut(index) ? count.held : count.tuning;
    if (unknown) {
      c.unknowns++;
      if (right) c.admitted++;
    } else {
      c.facts++;
      if (right) c.factsRight++;
    }
    if (isHeldOut(index)) continue;
    calibration.push({ score: ranked[0]?.score ?? 0, unknown, rightIfAnswered: !unknown && judge(question, reply(question.q, ranked, 0)) });
    if (!right || process.env.EVAL_SHOW_ALL === '1') {
      say(`- [${question.kind}${right ? '' : ', WRONG'}] ${question.q} (best ${(ranked[0]?.score ?? 0).toFixed(3)}${byMeaning ? ', by meaning' : ''})\n    ${text.replace(/\n/g, '\n    ')}`);
    }
  }
  const { tuning: t, held: h } = count;
  say(`=== ${name}: tuning facts ${t.factsRight}/${t.facts}, unknowns admitted ${t.admitted}/${t.unknowns}; held out facts ${h.factsRight}/${h.facts}, unknowns admitted ${h.admitted}/${h.unknowns}\n`);
}
const topUnknown = Math.max(0, ...calibration.filter((c) => c.unknown).map((c) => c.score));
const above = calibration.filter((c) => c.rightIfAnswered && c.score > topUnknown);
say(`calibration (tuning questions): best-scoring unknown ${topUnknown.toFixed(3)}; ${above.length} of ${calibration.filter((c) => !c.unknown).length} facts`
  + ` right above it, the lowest at ${Math.min(...above.map((c) => c.score)).toFixed(3)}; ANSWER_THRESHOLD is ${ANSWER_THRESHOLD}`);
