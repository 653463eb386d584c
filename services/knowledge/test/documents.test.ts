import { pdfWithText } from '@hangar/testing';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../src/documents/chunking.js';
import { extractDocumentText } from '../src/documents/text-extraction.js';
import { demoEmbedding } from '../src/embeddings/demo-embeddings.js';

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);

describe('chunkText', () => {
  it('keeps a short text whole and leaves out blank text', () => {
    expect(chunkText('  one short text \n', 100, 10)).toEqual(['one short text']);
    expect(chunkText(' \n\n ', 100, 10)).toEqual([]);
  });

  it('cuts at most size characters, each chunk opening on a whole word of the previous one’s end', () => {
    const text = Array.from({ length: 200 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunkText(text, 100, 20);
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) expect(chunk.length).toBeLessThanOrEqual(100);
    // Words stay whole where there are spaces, and consecutive chunks share their overlap.
    for (const chunk of chunks) expect(chunk).toMatch(/^word\d+( word\d+)*$/);
    for (let index = 1; index < chunks.length; index++) {
      const opening = chunks[index].split(' ')[0];
      expect(chunks[index - 1].split(' '), `chunk ${index} opens inside the previous one`).toContain(opening);
    }
    // Nothing is lost: every word is in some chunk.
    for (let index = 0; index < 200; index++) expect(chunks.some((chunk) => chunk.split(' ').includes(`word${index}`))).toBe(true);
  });

  it('prefers a paragraph break, then a sentence end, in the back of the window', () => {
    const paragraph = 'First paragraph sentence one. Sentence two here.';
    const chunks = chunkText(`${paragraph}\n\nSecond paragraph follows after the break and runs on.`, 60, 0);
    expect(chunks[0]).toBe(paragraph);
  });

  it('cuts a text without breaks hard and always moves forward, even with the largest overlap', () => {
    const chunks = chunkText('x'.repeat(250), 100, 99);
    expect(chunks[0]).toHaveLength(100);
    expect(chunks.at(-1)!.length).toBeGreaterThan(0);
    expect(chunks.length).toBe(151);
  });
});

describe('demo embeddings', () => {
  it('are deterministic unit vectors of the configured size', () => {
    const vector = demoEmbedding('The launch code of Project Falcon', 64);
    expect(vector).toHaveLength(64);
    expect(Math.hypot(...vector)).toBeCloseTo(1, 10);
    expect(demoEmbedding('The launch code of Project Falcon', 64)).toEqual(vector);
  });

  it('point texts that share words closer together than texts that do not', () => {
    const query = demoEmbedding('What is the launch code of Project Falcon?', 1536);
    const answer = demoEmbedding('Project Falcon: the launch code is 7-4-1.', 1536);
    const other = demoEmbedding('Cooking pasta needs boiling water and salt.', 1536);
    expect(cosine(query, answer)).toBeGreaterThan(0.5);
    expect(cosine(query, other)).toBeLessThan(0.1);
  });

  it('give a text of stop words only a unit vector, not zeros (cosine distance of zeros is undefined)', () => {
    expect(Math.hypot(...demoEmbedding('what is the', 16))).toBeCloseTo(1, 10);
  });
});

describe('extractDocumentText', () => {
  it('reads a PDF by its signature, whatever its name', async () => {
    const extracted = await extractDocumentText('notes.txt', pdfWithText(['The launch code is 7-4-1.', 'Second line.']));
    expect(extracted.mediaType).toBe('application/pdf');
    expect(extracted.text).toContain('The launch code is 7-4-1.');
    expect(extracted.text).toContain('Second line.');
  });

  it('reads UTF-8 text, as Markdown when the name says so', async () => {
    expect(await extractDocumentText('a.md', Buffer.from('# Title\nbody ü'))).toEqual({
      mediaType: 'text/markdown',
      text: '# Title\nbody ü',
    });
    expect((await extractDocumentText('a.txt', Buffer.from('plain'))).mediaType).toBe('text/plain');
  });

  it('refuses other bytes with 415 and a broken PDF with 400', async () => {
    await expect(extractDocumentText('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe]))).rejects.toMatchObject({
      kind: 'unsupportedMediaType',
    });
    await expect(extractDocumentText('nul.txt', Buffer.from('a\u0000b'))).rejects.toMatchObject({ kind: 'unsupportedMediaType' });
    await expect(extractDocumentText('broken.pdf', Buffer.from('%PDF-1.4 this is not a PDF'))).rejects.toMatchObject({
      kind: 'validation',
    });
  });
});
