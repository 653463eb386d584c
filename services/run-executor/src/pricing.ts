import type { HangarConfig } from '@hangar/platform';
import type { Cost, PriceSnapshot, Usage } from './runs/run.model.js';

const PER_MILLION = 1_000_000;

export function priceFor(pricing: HangarConfig['Pricing'], provider: string | null, model: string | null): PriceSnapshot {
  const entry = provider && model ? pricing.Models[provider]?.[model] : undefined;
  return { input: entry?.Input ?? null, output: entry?.Output ?? null, cachedInput: entry?.CachedInput ?? null };
}

/**
 * SPEC cost rule: full-price input = input − cached input; each term is priced only when its
 * price exists (NULL is not zero); total is the sum of the populated terms, null when none is.
 * Reasoning tokens are counted inside output tokens and priced at the output rate.
 */
export function costOf(usage: Usage, prices: PriceSnapshot, currency: string | null): Cost | null {
  const term = (tokens: number, price: number | null) => (price === null ? null : (tokens * price) / PER_MILLION);
  const input = term(usage.inputTokens - usage.cachedInputTokens, prices.input);
  const cachedInput = usage.cachedInputTokens > 0 || prices.cachedInput !== null ? term(usage.cachedInputTokens, prices.cachedInput) : null;
  const output = term(usage.outputTokens, prices.output);
  const populated = [input, cachedInput, output].filter((value): value is number => value !== null);
  if (populated.length === 0) return null;
  return { input, output, cachedInput, total: populated.reduce((sum, value) => sum + value, 0), currency: currency ?? 'USD' };
}

/**
 * A run's cost with what it paid beyond its model turns' tokens (the images its tool drew, the
 * compaction of its history) added to the total; a run whose model was not priced costs those alone.
 */
export function withExtraCost(cost: Cost | null, extraCost: number | null, currency: string | null): Cost | null {
  if (extraCost === null) return cost;
  if (cost === null) return { input: null, output: null, cachedInput: null, total: extraCost, currency: currency ?? 'USD' };
  return { ...cost, total: cost.total + extraCost };
}
