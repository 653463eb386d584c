import { fileTypeFromBuffer } from 'file-type';

/** Bytes read before the type is decided: what file-type needs for its longest signature. */
export const SIGNATURE_BYTES = 4100;

/**
 * The media type of a file from its first bytes, never from what the client declared:
 * a known signature wins; UTF-8 text without control characters is text/plain.
 */
export async function detectMediaType(head: Uint8Array, isWholeFile: boolean): Promise<string> {
  const detected = await fileTypeFromBuffer(head);
  if (detected) return detected.mime;
  return createTextCheck().accept(head, isWholeFile) ? 'text/plain' : 'application/octet-stream';
}

// Control characters other than tab, line feed, form feed, carriage return and escape mean binary.
const BINARY_CONTROL = /[\u0000-\u0008\u000B\u000E-\u001A\u001C-\u001F\u007F]/;

/** Checks text across chunks: valid UTF-8 (a character may span chunks) and no binary control bytes. */
export function createTextCheck() {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return {
    accept(chunk: Uint8Array, last = false): boolean {
      try {
        return !BINARY_CONTROL.test(decoder.decode(chunk, { stream: !last }));
      } catch {
        return false;
      }
    },
  };
}

/** `audio/*` allows every audio type; other entries match exactly (case-insensitive). */
export function isAllowedMediaType(mediaType: string, allowed: readonly string[]): boolean {
  const type = mediaType.toLowerCase();
  return allowed.some((entry) => {
    const pattern = entry.toLowerCase();
    return pattern.endsWith('/*') ? type.startsWith(pattern.slice(0, -1)) : type === pattern;
  });
}
