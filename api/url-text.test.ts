import { describe, expect, it } from 'vitest';
import { formTextErrors, requestLineErrors } from './url-text.ts';

describe('formTextErrors (form bodies and query strings, issue 40 D20)', () => {
  it('names the field holding U+0000 or a sequence that is not UTF-8', () => {
    expect(formTextErrors('Body=a%00b&From=%2B1', 'body')).toEqual([expect.objectContaining({ field: 'Body', code: 'invalid_characters' })]);
    expect(formTextErrors('Body=%FF', 'body')).toEqual([expect.objectContaining({ field: 'Body', code: 'invalid_encoding' })]);
    expect(formTextErrors('Body=%ED%A0%80', 'body')).toEqual([expect.objectContaining({ field: 'Body', code: 'invalid_encoding' })]);
    expect(formTextErrors('Bo%00dy=x', 'body')).toEqual([expect.objectContaining({ field: 'body', code: 'invalid_characters' })]);
    expect(formTextErrors('Body=caf%C3%A9+%F0%9F%9A%B2&To=%2B14155550100', 'body')).toEqual([]);
  });

  it('is the query string\'s check too', () => {
    expect(requestLineErrors('/a', 'q=a%00')).toEqual([expect.objectContaining({ field: 'q', code: 'invalid_characters' })]);
    expect(requestLineErrors('/a', '%FF=1')).toEqual([expect.objectContaining({ field: 'query', code: 'invalid_encoding' })]);
  });
});
