import { describe, expect, it } from 'vitest';
import { asciiComments } from './workflow-bundle.ts';

describe('asciiComments (issue 48: the workflow bundle kept in one byte a character)', () => {
  it('writes the non-ASCII characters of comment lines as \\u escapes, line for line', () => {
    const code = [
      '/**',
      ' * One campaign call: queued → claimed → dialing',
      ' */',
      '// A port of an algorithm by Johannes Baagøe',
      '  /* a 😀 */ run();',
      'run();',
    ].join('\n');
    const out = asciiComments(code);
    expect(out).toBe([
      '/**',
      ' * One campaign call: queued \\u2192 claimed \\u2192 dialing',
      ' */',
      '// A port of an algorithm by Johannes Baag\\u00f8e',
      '  /* a \\ud83d\\ude00 */ run();',
      'run();',
    ].join('\n'));
    expect(out).toMatch(/^[\x20-\x7e\n]*$/);
  });

  it('leaves a character in code as it is', () => {
    const code = "const arrow = '→';\nconst re = /é/;\n";
    expect(asciiComments(code)).toBe(code);
  });
});
