// Counts prompt tokens in a thread of its own (see prompt-tokens.ts): loading the tokenizer's ranks
// and counting a long prompt never hold the service's event loop. Plain JavaScript, so the thread
// starts without the TypeScript loader.
import { parentPort } from 'node:worker_threads';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

// BPE merges each pre-token pairwise, in time that grows with the square of its length, and one
// stretch without a break (16,000 × "A") is one pre-token. Text is counted exactly in segments cut
// before a space. A segment holding a long run is estimated from a few slices of it: counting it
// exactly would cost seconds per MiB, even in slices.
const SEGMENT = 8192;
const LONG_RUN = 256;
const SAMPLE_SLICE = 64;
const SAMPLES = 4;

const tokenizer = new Tiktoken(o200k);

/** The longest stretch of only whitespace or only non-whitespace characters, in one pass. */
function longestRun(text) {
  let longest = 0;
  let length = 0;
  let wasSpace;
  for (let index = 0; index < text.length; index++) {
    const space = text.charCodeAt(index) <= 32;
    length = space === wasSpace ? length + 1 : 1;
    wasSpace = space;
    if (length > longest) longest = length;
  }
  return longest;
}

function countSegment(segment) {
  if (longestRun(segment) < LONG_RUN) return tokenizer.encode(segment).length;
  // Evenly spaced slices: their tokens per character, times the segment's length.
  const step = Math.max(SAMPLE_SLICE, Math.floor(segment.length / SAMPLES));
  let sampledTokens = 0;
  let sampledChars = 0;
  for (let at = 0; at < segment.length && sampledChars < SAMPLES * SAMPLE_SLICE; at += step) {
    const slice = segment.slice(at, at + SAMPLE_SLICE);
    sampledTokens += tokenizer.encode(slice).length;
    sampledChars += slice.length;
  }
  return Math.ceil((sampledTokens / sampledChars) * segment.length);
}

/** Tokens of one text: segments of at most SEGMENT characters, each cut before whitespace where there is some. */
function countText(text) {
  let tokens = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(text.length, start + SEGMENT);
    if (end < text.length) {
      // Before whitespace where there is some (a pre-token starts there); never inside a surrogate pair.
      let cut = end;
      while (cut > start && text.charCodeAt(cut) > 32) cut--;
      if (cut > start) end = cut;
      else if ((text.charCodeAt(end) & 0xfc00) === 0xdc00) end--;
    }
    tokens += countSegment(text.slice(start, end));
    start = end;
  }
  return tokens;
}

parentPort.on('message', ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, tokens: texts.map(countText) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error?.message ?? error) });
  }
});
