import type { Response } from 'express';

/**
 * Writes one piece of a streamed answer, waiting while the socket's buffer is full; false once
 * the client has gone (a wait for `drain` alone would never end on a closed socket).
 */
export async function writePiece(response: Response, chunk: Uint8Array): Promise<boolean> {
  if (response.destroyed) return false;
  if (response.write(chunk)) return true;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done).off('close', done);
      resolve();
    };
    response.once('drain', done).once('close', done);
  });
  return !response.destroyed;
}
