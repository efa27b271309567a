import { createHash } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { readdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

/**
 * A call's lexicon for the offline recognizer (issue 44, bench/README.md bench:voice's fifth pass): the words the
 * decoder searches among. pocketsphinx's search walks a tree of every word both its dictionary and its language model
 * know (about 72,000 with Debian's en-us model), and that tree is most of its CPU; most of those words are never said
 * on a call. A call's lexicon is the `LEXICON_COMMON` most probable words of the model's own unigrams (ranked by the
 * language model itself, nothing chosen by hand) and the agent's own words: its name, greeting, transfer rules and the
 * words of its knowledge. The language model stays Debian's (its bigrams and trigrams among the lexicon's words are
 * used as they are); an agent's word the model does not know is added to the decoder as a unigram (`ps_add_word`).
 * Words without a pronunciation in the model's dictionary are not heard, as before.
 */

/** The language model's most probable words every lexicon holds (measured: bench/README.md, bench:voice's fifth pass). */
export const LEXICON_COMMON = 10_000;
/** Lexicons kept on disk (about 270 KiB each); the least recently built beyond them are deleted. */
const KEPT_ON_DISK = 200;
/** At most this many words of an agent's knowledge, the ones its passages write most. */
export const LEXICON_KNOWLEDGE = 5000;

export interface Lexicon {
  /** The pronunciation dictionary: its words the language model knows. */
  dict: string;
  /** `word phones` lines of the agent's words the language model does not know (added as unigrams), or null. */
  added: string | null;
}

/**
 * Builds a lexicon's files from the model: the language model's unigrams ranked by probability (libsphinxbase through
 * ctypes), the top `common` and the given words, their pronunciations from the dictionary. Writes `<out>.dict` and
 * `<out>.added` (renamed into place whole) and prints their line counts.
 */
const BUILDER = `
import ctypes, os, sys
model, common, words_file, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sb = ctypes.CDLL('libsphinxbase.so.3')
sb.logmath_init.restype = ctypes.c_void_p; sb.logmath_init.argtypes = [ctypes.c_double, ctypes.c_int, ctypes.c_int]
sb.ngram_model_read.restype = ctypes.c_void_p; sb.ngram_model_read.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p]
sb.ngram_model_get_counts.restype = ctypes.POINTER(ctypes.c_uint32); sb.ngram_model_get_counts.argtypes = [ctypes.c_void_p]
sb.ngram_word.restype = ctypes.c_char_p; sb.ngram_word.argtypes = [ctypes.c_void_p, ctypes.c_int32]
sb.ngram_probv.restype = ctypes.c_int32; sb.ngram_probv.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
sb.err_set_logfile.argtypes = [ctypes.c_char_p]; sb.err_set_logfile(b'/dev/null')
lm = sb.ngram_model_read(None, (model + '/en-us.lm.bin').encode(), 0, sb.logmath_init(1.0001, 0, 0))
if not lm: sys.exit(2)
known = []
for i in range(sb.ngram_model_get_counts(lm)[0]):
    w = sb.ngram_word(lm, i)
    known.append((sb.ngram_probv(lm, w, None), w.decode('utf-8', 'replace')))
in_lm = set(w for _, w in known)
known.sort(key=lambda pw: (-pw[0], pw[1]))
keep = set(w for _, w in known[:common])
with open(words_file, encoding='utf-8') as f: keep.update(line.strip() for line in f if line.strip())
kept, added = [], []
with open(model + '/cmudict-en-us.dict', encoding='utf-8', errors='replace') as f:
    for line in f:
        word = line.split(' ', 1)[0]
        base = word.split('(', 1)[0]
        if base not in keep: continue
        if base in in_lm: kept.append(line)
        elif word == base: added.append(line)
for suffix, lines in (('.dict', kept), ('.added', added)):
    with open(out + suffix + '.tmp', 'w', encoding='utf-8') as f: f.writelines(lines)
    os.replace(out + suffix + '.tmp', out + suffix)
print(len(kept), len(added))
`;

const built = new Map<string, Promise<Lexicon | null>>();

/** Lowercase words (letters and apostrophes) of texts, as the dictionary spells them. */
export function wordsOf(texts: readonly (string | null | undefined)[]): string[] {
  const words = new Set<string>();
  for (const text of texts) for (const w of text?.toLowerCase().replace(/’/g, "'").match(/[a-z]+(?:'[a-z]+)*/g) ?? []) words.add(w);
  return [...words];
}

/**
 * The lexicon of these words with the model's most probable ones, built once and kept on disk by its content (a new
 * set of words, an agent's knowledge changed, is another lexicon); null when it could not be built (the decoder then
 * searches the whole model, as before).
 */
export function lexiconOf(model: string, words: readonly string[], common = LEXICON_COMMON): Promise<Lexicon | null> {
  const sorted = [...new Set(words)].sort();
  const key = createHash('sha256').update(JSON.stringify([model, common, sorted])).digest('hex').slice(0, 32);
  let lexicon = built.get(key);
  if (!lexicon) {
    lexicon = buildLexicon(model, sorted, common, key);
    built.set(key, lexicon);
    // A failed build is tried again by the next call.
    void lexicon.then((l) => { if (!l) built.delete(key); });
  }
  return lexicon;
}

async function buildLexicon(model: string, words: string[], common: number, key: string): Promise<Lexicon | null> {
  const dir = join(tmpdir(), 'ams-voice-lexicons');
  const out = join(dir, key);
  if (existsSync(`${out}.dict`) && existsSync(`${out}.added`)) {
    // Used again: the last to be pruned.
    const now = new Date();
    await utimes(`${out}.dict`, now, now).catch(() => {});
    return filesOf(out);
  }
  mkdirSync(dir, { recursive: true });
  const wordsFile = `${out}.words`;
  await writeFile(wordsFile, `${words.join('\n')}\n`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('python3', ['-c', BUILDER, model, String(common), wordsFile, out], { stdio: 'ignore' });
    child.on('error', () => resolve(null));
    child.on('close', resolve);
  });
  await unlink(wordsFile).catch(() => {});
  if (code !== 0) return null;
  await pruneLexicons(dir).catch(() => {});
  return filesOf(out);
}

/**
 * The lexicons on disk beyond KEPT_ON_DISK, oldest first, deleted; never one this process has used (its calls may start
 * decoders with it), nor one being written.
 */
async function pruneLexicons(dir: string): Promise<void> {
  const dicts = (await readdir(dir)).filter((f) => f.endsWith('.dict') && !built.has(f.slice(0, -'.dict'.length)));
  if (dicts.length <= KEPT_ON_DISK) return;
  const dated = await Promise.all(dicts.map(async (f) => ({ key: f.slice(0, -'.dict'.length), at: (await stat(join(dir, f))).mtimeMs })));
  dated.sort((a, b) => a.at - b.at);
  for (const { key } of dated.slice(0, dated.length - KEPT_ON_DISK)) {
    for (const suffix of ['.dict', '.added']) await unlink(join(dir, key + suffix)).catch(() => {});
  }
}

async function filesOf(out: string): Promise<Lexicon> {
  const added = (await stat(`${out}.added`)).size > 0 ? `${out}.added` : null;
  return { dict: `${out}.dict`, added };
}
