import { HangarError, validationError } from '@hangar/platform';
import { extractText, getDocumentProxy } from 'unpdf';

export type DocumentMediaType = 'text/plain' | 'text/markdown' | 'application/pdf';

export interface ExtractedText {
  mediaType: DocumentMediaType;
  text: string;
}

const PDF_SIGNATURE = Buffer.from('%PDF-');
const MARKDOWN_NAME = /\.(md|markdown)$/i;

/** Markdown is kept as written: its headings and lists are words a search should find. */
export const textMediaType = (name: string): DocumentMediaType => (MARKDOWN_NAME.test(name) ? 'text/markdown' : 'text/plain');

/**
 * The text of an uploaded file: a PDF (by its signature) through pdf.js (unpdf), its pages joined;
 * anything else must be UTF-8 text, read as Markdown when its name says so. Other bytes are 415.
 */
export async function extractDocumentText(name: string, bytes: Uint8Array): Promise<ExtractedText> {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 5)).equals(PDF_SIGNATURE)) {
    let text: string;
    // pdf.js takes the buffer over: a copy keeps the caller's bytes usable.
    const loading = getDocumentProxy(new Uint8Array(bytes));
    try {
      text = (await extractText(await loading, { mergePages: true })).text;
    } catch (error) {
      throw validationError(`the PDF could not be read: ${(error as Error).message}`, [{ path: 'file', message: 'is not a readable PDF' }]);
    } finally {
      // Frees the document whether it was read or not.
      await loading.then((pdf) => pdf.loadingTask.destroy()).catch(() => {});
    }
    return { mediaType: 'application/pdf', text };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw unsupported();
  }
  if (text.includes('\u0000')) throw unsupported();
  return { mediaType: textMediaType(name), text };
}

const unsupported = () => new HangarError('unsupportedMediaType', 'a document must be UTF-8 text (plain or Markdown) or a PDF');
