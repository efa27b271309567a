import { createHash, hash, randomBytes } from 'node:crypto';

export type TokenKind = 'org' | 'user';
const PREFIX: Record<TokenKind, string> = { org: 'sk_', user: 'ut_' };

/** A new secret token: a kind prefix and 256 random bits, URL-safe. */
export function generateToken(kind: TokenKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url');
}

/** Tokens carry 256 random bits, so a plain SHA-256 is enough to store them safely. */
export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** The same digest as base64 text, in one native call: the authenticator's cache key. */
export function tokenDigest(token: string): string {
  return hash('sha256', token, 'base64');
}

/** What a listing may show of a token without revealing it: its prefix and last four characters. */
export function tokenHint(token: string): string {
  return `${token.slice(0, 3)}...${token.slice(-4)}`;
}

export function tokenKindOf(token: string): TokenKind | null {
  if (token.startsWith('sk_')) return 'org';
  if (token.startsWith('ut_')) return 'user';
  return null;
}
