import type { HangarConfig } from '@hangar/platform';

/** What a generation of images costs: its quantity always, its cost when a price applies. */
export interface ImageCharge {
  quantity: number;
  cost: number | null;
  currency: string;
}

/**
 * SPEC Pricing:Images:{provider}:{model}: `PerImage` per image, times the multiplier of the exact
 * size string the provider was asked for (`SizeMultipliers`; a size without one counts 1); or
 * `OutputCostPerMillionTokens` on the output tokens the provider reported (none reported: no
 * cost). No price for the model: the quantity is recorded, the cost is null.
 */
export function imageCharge(
  pricing: HangarConfig['Pricing'],
  target: { provider: string; model: string },
  generated: { count: number; size: string | undefined; outputTokens: number | null },
): ImageCharge {
  const currency = pricing.Currency ?? 'USD';
  const price = pricing.Images[target.provider]?.[target.model];
  const charge = (cost: number | null): ImageCharge => ({ quantity: generated.count, cost, currency });
  if (!price) return charge(null);
  if (price.PerImage !== null) {
    const multiplier = generated.size !== undefined ? (price.SizeMultipliers[generated.size] ?? 1) : 1;
    return charge(price.PerImage * multiplier * generated.count);
  }
  if (price.OutputCostPerMillionTokens !== null && generated.outputTokens !== null)
    return charge((generated.outputTokens * price.OutputCostPerMillionTokens) / 1_000_000);
  return charge(null);
}
