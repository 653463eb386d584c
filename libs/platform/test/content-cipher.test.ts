import { randomBytes } from 'node:crypto';
import { createContentCipher, PROTECTED_COLUMNS, type ProtectedColumn } from '@hangar/platform';
import { describe, expect, it } from 'vitest';

/** API.md "Content protection": the envelope, tenant and column bound, rotation, and what a missing key does. */

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const all = new Set<ProtectedColumn>(PROTECTED_COLUMNS);
const cipherWith = (activeKeyId: string | undefined, keys: Record<string, Buffer>, columns = all) =>
  createContentCipher({ activeKeyId, keys: new Map(Object.entries(keys)), columns });

describe('content cipher', () => {
  it('seals to hgc1.<keyId>.<nonce>.<ciphertext+tag> without the plaintext, and opens it again', () => {
    const cipher = cipherWith('k1', { k1 });
    const sealed = cipher.seal('acme', 'SessionMessages', 'the canary 7c1f');
    expect(sealed).toMatch(/^hgc1\.k1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('canary');
    expect(cipher.seal('acme', 'SessionMessages', 'the canary 7c1f')).not.toBe(sealed);
    expect(cipher.open('acme', 'SessionMessages', sealed)).toBe('the canary 7c1f');
  });

  it('binds the tenant and the column: a value moved elsewhere does not open', () => {
    const cipher = cipherWith('k1', { k1 });
    const sealed = cipher.seal('acme', 'RunInputs', 'secret');
    expect(() => cipher.open('globex', 'RunInputs', sealed)).toThrow(/does not open for this tenant and column/);
    expect(() => cipher.open('acme', 'SessionState', sealed)).toThrow(/does not open/);
    // A character inside the sealed bytes (a base64 string's last one may carry only padding bits).
    const at = sealed.length - 10;
    const tampered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
    expect(() => cipher.open('acme', 'RunInputs', tampered)).toThrow(/does not open/);
  });

  it('keeps JSON in a marker object for jsonb columns, and reads plain values written before protection', () => {
    const cipher = cipherWith('k1', { k1 });
    const value = { messages: [{ role: 'user', content: 'canary' }], n: 1 };
    const stored = cipher.sealJson('acme', 'RunInputs', value);
    expect(JSON.stringify(stored)).not.toContain('canary');
    expect(cipher.openJson('acme', 'RunInputs', stored)).toEqual(value);
    expect(cipher.openJson('acme', 'RunInputs', { plain: true })).toEqual({ plain: true });
    expect(cipher.openJson('acme', 'RunInputs', 'hgc1 is just text')).toBe('hgc1 is just text');
    expect(cipher.open('acme', 'RunInputs', 'written before')).toBe('written before');
  });

  it('rotates: new writes use the active key, old keys stay readable, and tells what to seal again', () => {
    const before = cipherWith('k1', { k1 }).seal('acme', 'RunScoreComments', 'old');
    const rotated = cipherWith('k2', { k1, k2 });
    expect(rotated.open('acme', 'RunScoreComments', before)).toBe('old');
    const after = rotated.seal('acme', 'RunScoreComments', 'new');
    expect(after.split('.')[1]).toBe('k2');
    expect([rotated.needsResealing('RunScoreComments', before), rotated.needsResealing('RunScoreComments', after)]).toEqual([true, false]);
    expect(rotated.needsResealing('RunScoreComments', 'plain')).toBe(true);
  });

  it('names a key id it does not have instead of answering anything', () => {
    const sealed = cipherWith('k1', { k1 }).seal('acme', 'WebhookPayloads', 'x');
    expect(() => cipherWith('k2', { k2 }).open('acme', 'WebhookPayloads', sealed)).toThrow(
      /key "k1" cannot be read: that key is not configured/,
    );
  });

  it('leaves values alone while off, and for columns not listed', () => {
    expect(cipherWith(undefined, { k1 }).seal('acme', 'RunInputs', 'plain')).toBe('plain');
    expect(cipherWith('k1', { k1 }, new Set(['RunInputs'])).seal('acme', 'SessionState', 'plain')).toBe('plain');
  });

  it('refuses keys that are not 32 bytes and an active key that is not configured', () => {
    expect(() => cipherWith('k1', { k1: randomBytes(16) })).toThrow(/must be 32 bytes/);
    expect(() => cipherWith('k3', { k1 })).toThrow(/active content key "k3" is not configured/);
  });
});
