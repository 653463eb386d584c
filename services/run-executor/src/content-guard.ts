import type { HangarConfig } from '@hangar/platform';

/** The kinds of personal data `ContentGuard:Pattern:MaskedPii` may name. */
export const PII_KINDS = ['Email', 'Phone', 'CreditCard', 'IpAddress', 'Iban'] as const;
export type PiiKind = (typeof PII_KINDS)[number];

const luhn = (digits: string) => {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
};

/** Card numbers first: their digits would otherwise read as a phone number. */
const PII: Array<[PiiKind, RegExp, (match: string) => boolean]> = [
  ['Email', /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, () => true],
  ['Iban', /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g, () => true],
  ['CreditCard', /\b\d(?:[ -]?\d){12,18}\b/g, (match) => luhn(match.replace(/\D/g, ''))],
  ['IpAddress', /\b(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\b/g, () => true],
  // E.164 numbers have at most 15 digits; 8 or more keeps dates and small numbers out.
  [
    'Phone',
    /(?<![\w+])\+?\d[\d ().-]{6,}\d(?!\w)/g,
    (match) => match.replace(/\D/g, '').length >= 8 && match.replace(/\D/g, '').length <= 15,
  ],
];

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The pattern content guard (`ContentGuard:Pattern`): denied terms block, personal data is masked.
 * A term matches case-insensitively as a whole word (or anywhere, when it does not start and end
 * with a letter or digit).
 */
export function createPatternGuard(settings: { deniedTerms: string[]; maskedPii: PiiKind[]; replacement: string }) {
  const terms = settings.deniedTerms
    .map((term) => term.trim())
    .filter(Boolean)
    .map((term) => {
      const wordy = /^\w/.test(term) && /\w$/.test(term);
      return new RegExp(wordy ? `\\b${escapeRegExp(term)}\\b` : escapeRegExp(term), 'i');
    });
  const masks = PII.filter(([kind]) => settings.maskedPii.includes(kind));
  return {
    /** Whether the text holds a denied term. */
    blocks: (text: string) => terms.some((term) => term.test(text)),
    mask: (text: string) =>
      masks.reduce(
        (masked, [, pattern, accept]) => masked.replace(pattern, (match) => (accept(match) ? settings.replacement : match)),
        text,
      ),
  };
}

export type ContentGuard = ReturnType<typeof createPatternGuard>;

/** The registered guard, or undefined: a present `ContentGuard:Pattern` section registers it (SPEC). */
export function contentGuardFrom(config: HangarConfig): ContentGuard | undefined {
  const pattern = config.ContentGuard.Pattern;
  if (!pattern) return undefined;
  return createPatternGuard({
    deniedTerms: pattern.DeniedTerms,
    maskedPii: pattern.MaskedPii as PiiKind[],
    replacement: pattern.MaskReplacement,
  });
}
