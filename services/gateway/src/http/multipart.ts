import type { Request } from 'express';
import Busboy from 'busboy';
import { HangarError, validationError } from '@hangar/platform';

/**
 * Streams the `file` part of a multipart request into `store` without buffering it. The result
 * is `store`'s, or a 400 for a missing `file` part or a body that is malformed or cut off. When
 * `store` fails early (a refused type, a size over the limit) the rest of the body is drained.
 */
export function receiveFilePart<T>(
  request: Request,
  store: (fileName: string, bytes: AsyncIterable<Uint8Array>, signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = new AbortController();
    let parser: Busboy.Busboy;
    try {
      parser = Busboy({
        headers: request.headers,
        defParamCharset: 'utf8',
        limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 32 },
      });
    } catch {
      reject(
        validationError('the multipart body has no valid boundary', [
          { path: 'body', message: 'must be multipart/form-data with a boundary' },
        ]),
      );
      return;
    }
    let upload: Promise<T> | undefined;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      abort.abort();
      request.unpipe(parser);
      request.resume();
      reject(error);
    };
    parser.on('file', (name, stream, info) => {
      if (name !== 'file' || upload) {
        stream.resume();
        return;
      }
      upload = store(info.filename ?? 'file', stream, abort.signal);
      upload.catch(fail);
    });
    parser.on('error', () =>
      fail(
        validationError('the multipart body is malformed or was cut off', [
          { path: 'body', message: 'is not complete multipart/form-data' },
        ]),
      ),
    );
    parser.on('close', () => {
      if (settled) return;
      if (!upload) {
        fail(validationError('a `file` part is required', [{ path: 'file', message: 'is required' }]));
        return;
      }
      upload.then((value) => {
        settled = true;
        resolve(value);
      }, fail);
    });
    request.on('aborted', () => fail(new HangarError('validation', 'the upload was aborted by the client')));
    request.pipe(parser);
  });
}
