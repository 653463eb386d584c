/**
 * Cuts a text into chunks of at most `size` characters, each starting `overlap` characters before
 * the previous one ended (Knowledge:ChunkSize, Knowledge:ChunkOverlap). A chunk ends at the last
 * paragraph break, else line break, else sentence end, else space in the back fifth of its window,
 * so words and sentences are kept whole where the text allows; a text with none there is cut hard.
 * Whitespace around each chunk is trimmed; blank chunks are left out.
 */
export function chunkText(text: string, size: number, overlap: number): string[] {
  if (size < 1) throw new RangeError('chunk size must be at least 1');
  const step = Math.max(0, Math.min(overlap, size - 1));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) end = breakBefore(text, start, end);
    const chunk = text.slice(start, end).trim();
    if (chunk) chunks.push(chunk);
    if (end >= text.length) break;
    // Always forward, even when the break left less than the overlap behind.
    start = Math.max(end - step, start + 1);
  }
  return chunks;
}

const BREAKS = ['\n\n', '\n', '. ', '? ', '! ', ' '];

function breakBefore(text: string, start: number, end: number): number {
  const window = text.slice(start, end);
  const earliest = Math.floor(window.length * 0.8);
  for (const mark of BREAKS) {
    const at = window.lastIndexOf(mark);
    if (at >= earliest) return start + at + mark.length;
  }
  return end;
}
