/**
 * Cuts a text into chunks of at most `size` characters (Knowledge:ChunkSize), each starting up to
 * `overlap` characters (Knowledge:ChunkOverlap) before the previous one ended, at the first whole
 * word there. A chunk ends at the last paragraph break, else line break, else sentence end, else
 * space in the back fifth of its window, so words and sentences are kept whole where the text
 * allows; a text with none there is cut hard.
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
    // Always forward, even when the break left less than the overlap behind; and from a word's
    // start, so the overlap shrinks to whole words rather than opening on half of one.
    let next = Math.max(end - step, start + 1);
    if (/\S/.test(text[next - 1])) {
      const space = text.slice(next, end).search(/\s/);
      if (space >= 0) next += space + 1;
    }
    start = next;
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
