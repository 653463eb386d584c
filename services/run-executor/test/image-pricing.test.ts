import { loadConfig } from '@hangar/platform';
import { describe, expect, it } from 'vitest';
import { imageCharge } from '../src/images/image-pricing.js';

const pricing = loadConfig({
  env: {},
  overrides: {
    Pricing: {
      Currency: 'EUR',
      Images: {
        openai: {
          'dall-e-3': { PerImage: 0.04, SizeMultipliers: { '1024x1792': 2, '1792x1024': 2 } },
          'gpt-image-1': { OutputCostPerMillionTokens: 40 },
        },
      },
    },
  },
}).Pricing;

describe('image pricing', () => {
  it('prices per image, times the multiplier of the exact size string asked for', () => {
    const target = { provider: 'openai', model: 'dall-e-3' };
    expect(imageCharge(pricing, target, { count: 3, size: '1024x1024', outputTokens: null })).toEqual({
      quantity: 3,
      cost: 0.12,
      currency: 'EUR',
    });
    expect(imageCharge(pricing, target, { count: 2, size: '1024x1792', outputTokens: null }).cost).toBeCloseTo(0.16);
    // Not the same string: no multiplier.
    expect(imageCharge(pricing, target, { count: 1, size: '1024X1792', outputTokens: null }).cost).toBeCloseTo(0.04);
    expect(imageCharge(pricing, target, { count: 1, size: undefined, outputTokens: 999 }).cost).toBeCloseTo(0.04);
  });

  it('prices by output tokens when the provider reported them, and not at all when it did not', () => {
    const target = { provider: 'openai', model: 'gpt-image-1' };
    expect(imageCharge(pricing, target, { count: 2, size: '1024x1024', outputTokens: 8_000 }).cost).toBeCloseTo(0.32);
    expect(imageCharge(pricing, target, { count: 2, size: '1024x1024', outputTokens: null })).toEqual({
      quantity: 2,
      cost: null,
      currency: 'EUR',
    });
  });

  it('records the quantity with no cost for a model without a price', () => {
    expect(imageCharge(pricing, { provider: 'openai', model: 'unpriced' }, { count: 4, size: undefined, outputTokens: 10 })).toEqual({
      quantity: 4,
      cost: null,
      currency: 'EUR',
    });
  });
});
