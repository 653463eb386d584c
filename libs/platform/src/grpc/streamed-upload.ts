import { validationError } from '../errors.js';

/** A client-streamed upload's message: its header first, then the content in chunks. */
export type UploadPart<Header> = { part?: { $case: 'header'; value: Header } | { $case: 'chunk'; value: Buffer } };

/** The header message, then the content's bytes as one stream (attachments, knowledge documents). */
export async function splitStreamedUpload<Header>(requests: AsyncIterable<UploadPart<Header>>) {
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value.part?.$case !== 'header') {
    throw validationError('an upload starts with its header', [{ path: 'header', message: 'is required first' }]);
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (next.value.part?.$case !== 'chunk') throw validationError('only chunks may follow the header');
      yield next.value.part.value;
    }
  }
  return { header: first.value.part.value, chunks: chunks() };
}
