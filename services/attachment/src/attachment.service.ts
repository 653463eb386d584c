import { createHash, randomUUID } from 'node:crypto';
import { clampPage, HangarError, isUuid, notFound, validationError, type Caller } from '@hangar/platform';
import type { AttachmentRepository, AttachmentRow } from './attachment.repository.js';
import { createTextCheck, detectMediaType, isAllowedMediaType, SIGNATURE_BYTES } from './media-type.js';

/** Bytes per stored chunk (and per download message). */
export const CHUNK_BYTES = 256 * 1024;
const CHUNKS_PER_READ = 4;
const UNFINISHED_UPLOAD_AGE_MS = 60 * 60 * 1000;
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface AttachmentSettings {
  maxBytes: number;
  allowedMediaTypes: readonly string[];
}

export interface UploadHeader {
  fileName: string;
  sessionId?: string;
}

/** Keeps only the last path segment and drops control characters: the name is shown, never used as a path. */
function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .replace(/[\u0000-\u001F\u007F]/g, '')
    .trim()
    .slice(0, 255);
  return cleaned || 'file';
}

const aborted = () => new HangarError('validation', 'the upload was aborted');

/** Yields `source` until `signal` aborts, then throws, even while waiting for the next piece. */
async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const abort = new Promise<never>((_, reject) => {
    if (signal.aborted) reject(aborted());
    signal.addEventListener('abort', () => reject(aborted()), { once: true });
  });
  abort.catch(() => {}); // observed through the race below
  while (true) {
    const step = await Promise.race([iterator.next(), abort]);
    if (step.done) return;
    yield step.value;
  }
}

/** Regroups arbitrary incoming pieces into fixed-size chunks. */
function createChunker(size: number) {
  let parts: Uint8Array[] = [];
  let length = 0;
  return {
    push(piece: Uint8Array): Uint8Array[] {
      parts.push(piece);
      length += piece.length;
      const full: Uint8Array[] = [];
      while (length >= size) {
        const joined = Buffer.concat(parts, length);
        full.push(joined.subarray(0, size));
        parts = [joined.subarray(size)];
        length -= size;
      }
      return full;
    },
    rest(): Uint8Array | undefined {
      return length > 0 ? Buffer.concat(parts, length) : undefined;
    },
  };
}

/** Attachment rules: type by signature, size and hash while streaming, bytes removed at once on delete. */
export function createAttachmentService(deps: { repository: AttachmentRepository; settings: AttachmentSettings }) {
  const { repository, settings } = deps;

  const tooLarge = () =>
    new HangarError('payloadTooLarge', `the file is larger than ${settings.maxBytes} bytes (Attachments:MaxBytes)`, {
      limit: settings.maxBytes,
    });
  const refusedType = (mediaType: string) =>
    new HangarError('unsupportedMediaType', `the file's signature says ${mediaType}, which is not an allowed media type`, {
      detectedMediaType: mediaType,
      allowedMediaTypes: settings.allowedMediaTypes,
    });

  async function get(caller: Caller, id: string): Promise<AttachmentRow> {
    const attachment = isUuid(id) ? await repository.get(caller.tenantId, id) : undefined;
    if (!attachment) throw notFound(`attachment ${id} not found`);
    return attachment;
  }

  return {
    async sweepUnfinishedUploads(now = new Date()): Promise<number> {
      return repository.sweepUnfinished(new Date(now.getTime() - UNFINISHED_UPLOAD_AGE_MS));
    },

    /**
     * Stores a streamed upload. The type is decided from the first bytes before anything is
     * written; a refused or broken upload leaves no bytes behind.
     */
    async upload(caller: Caller, header: UploadHeader, source: AsyncIterable<Uint8Array>, signal: AbortSignal): Promise<AttachmentRow> {
      // A cancelled call does not always end its request stream; the signal does end the upload.
      const pieces = untilAborted(source, signal);
      if (header.sessionId !== undefined && !SESSION_ID.test(header.sessionId)) {
        throw validationError('sessionId is not a valid session id', [
          { path: 'sessionId', message: 'must be 1-128 characters of letters, digits, ".", "_", ":" or "-"' },
        ]);
      }
      const id = randomUUID();
      const hash = createHash('sha256');
      const chunker = createChunker(CHUNK_BYTES);
      let head: Uint8Array[] = [];
      let headBytes = 0;
      let size = 0;
      let seq = 0;
      let started = false;
      let textCheck: ReturnType<typeof createTextCheck> | undefined;

      const store = async (piece: Uint8Array) => {
        if (textCheck && !textCheck.accept(piece)) throw refusedType('application/octet-stream');
        for (const chunk of chunker.push(piece)) await repository.writeChunk(id, seq++, chunk);
      };
      const start = async (isWholeFile: boolean) => {
        const sample = Buffer.concat(head, headBytes);
        const mediaType = await detectMediaType(sample, isWholeFile);
        if (!isAllowedMediaType(mediaType, settings.allowedMediaTypes)) throw refusedType(mediaType);
        if (mediaType === 'text/plain') textCheck = createTextCheck();
        await repository.begin(caller.tenantId, {
          id,
          fileName: cleanFileName(header.fileName),
          mediaType,
          sessionId: header.sessionId ?? null,
        });
        started = true;
        head = [];
        await store(sample);
      };

      try {
        for await (const piece of pieces) {
          size += piece.length;
          if (size > settings.maxBytes) throw tooLarge();
          hash.update(piece);
          if (started) {
            await store(piece);
            continue;
          }
          head.push(piece);
          headBytes += piece.length;
          if (headBytes >= SIGNATURE_BYTES) await start(false);
        }
        if (signal.aborted) throw aborted();
        if (size === 0) throw validationError('the file is empty', [{ path: 'file', message: 'must not be empty' }]);
        if (!started) await start(true);
        const rest = chunker.rest();
        if (rest) await repository.writeChunk(id, seq++, rest);
        if (textCheck && !textCheck.accept(new Uint8Array(), true)) throw refusedType('application/octet-stream');
        return await repository.complete(id, size, hash.digest('hex'));
      } catch (error) {
        if (started) await repository.discard(id);
        throw error;
      }
    },

    async list(caller: Caller, filter: { sessionId?: string; skip: number; take: number }): Promise<AttachmentRow[]> {
      return repository.list(caller.tenantId, {
        sessionId: filter.sessionId,
        ...clampPage(filter.skip, filter.take),
      });
    },

    get,

    /** The descriptor and the bytes, read a few chunks at a time so a download never holds the whole file. */
    async download(caller: Caller, id: string): Promise<{ attachment: AttachmentRow; chunks: AsyncIterable<Uint8Array> }> {
      const attachment = await get(caller, id);
      async function* chunks() {
        for (let seq = 0; ; seq += CHUNKS_PER_READ) {
          const batch = await repository.readChunks(id, seq, CHUNKS_PER_READ);
          yield* batch;
          if (batch.length < CHUNKS_PER_READ) return;
        }
      }
      return { attachment, chunks: chunks() };
    },

    async delete(caller: Caller, id: string): Promise<void> {
      if (!isUuid(id) || !(await repository.delete(caller.tenantId, id))) throw notFound(`attachment ${id} not found`);
    },

    async deleteSessionAttachments(caller: Caller, sessionId: string): Promise<number> {
      return repository.deleteBySession(caller.tenantId, sessionId);
    },
  };
}

export type AttachmentService = ReturnType<typeof createAttachmentService>;
