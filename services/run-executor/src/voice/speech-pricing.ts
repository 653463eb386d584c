import type { HangarConfig } from '@hangar/platform';

/** What one speech call costs, when a price applies. */
export interface SpeechCharge {
  cost: number | null;
  currency: string;
}

/** `Pricing:Voice`: per provider, per model. */
type VoicePrices = HangarConfig['Pricing']['Voice'];
type Target = { provider: string; model: string };

const charge = (currency: string | null, cost: number | null): SpeechCharge => ({ cost, currency: currency ?? 'USD' });

/** SPEC `Pricing:Voice:{provider}:{model}:PerMillionCharacters`: speech made from text, per character sent. */
export function synthesisCharge(prices: VoicePrices, currency: string | null, target: Target, characters: number): SpeechCharge {
  const price = prices[target.provider]?.[target.model]?.PerMillionCharacters;
  return charge(currency, price == null ? null : (characters * price) / 1_000_000);
}

/** SPEC `Pricing:Voice:{provider}:{model}:PerMinute`: text made from speech, per minute of audio (unknown length: no cost). */
export function transcriptionCharge(prices: VoicePrices, currency: string | null, target: Target, seconds: number | null): SpeechCharge {
  const price = prices[target.provider]?.[target.model]?.PerMinute;
  return charge(currency, price == null || seconds === null ? null : (seconds / 60) * price);
}
