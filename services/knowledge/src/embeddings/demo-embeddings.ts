import type { EmbeddingModelV2 } from '@ai-sdk/provider';

/** Words too common to tell texts apart: left out, so they do not pull every text together. */
const STOP_WORDS = new Set(
  'a an and are as at be by for from has have in is it its of on or that the this to was were what when where which who why with'.split(
    ' ',
  ),
);

/**
 * The Demo provider's embeddings: deterministic and offline. Each word (lower-cased letters and
 * digits, stop words left out) adds ±1 at a position given by its FNV-1a hash (feature hashing),
 * and the vector is scaled to length 1 (a text of no words points along the first axis); texts sharing words point alike, so cosine search finds
 * the text that shares the query's words. Not a language model: synonyms do not meet.
 */
export function demoEmbedding(text: string, dimensions: number): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (STOP_WORDS.has(word)) continue;
    const hash = fnv1a(word);
    vector[hash % dimensions] += hash & 0x80000000 ? -1 : 1;
  }
  const length = Math.hypot(...vector);
  // Cosine distance to a zero vector is undefined: a text of no words points along the first axis.
  if (length === 0) vector[0] = 1;
  return length === 0 ? vector : vector.map((value) => value / length);
}

export function createDemoEmbeddingModel(modelId: string, dimensions: number): EmbeddingModelV2<string> {
  return {
    specificationVersion: 'v2',
    provider: 'demo',
    modelId,
    maxEmbeddingsPerCall: 2048,
    supportsParallelCalls: true,
    async doEmbed({ values }) {
      return { embeddings: values.map((value) => demoEmbedding(value, dimensions)) };
    },
  };
}

function fnv1a(word: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < word.length; index++) {
    hash ^= word.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
