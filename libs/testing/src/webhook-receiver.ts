import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers the n-th request (1-based) to a path. */
export type ReceiverAnswer = { status: number } | { redirect: string } | { hang: true } | { streamBytes: number };

export interface WebhookReceiver {
  /** Base URL, e.g. `http://127.0.0.1:4100`. */
  url: string;
  received: ReceivedWebhook[];
  /** Requests to `path` so far. */
  to(path: string): ReceivedWebhook[];
  /** Answers later requests to `path` with `answer(n)`; 200 when none is set. */
  answer(path: string, answer: (n: number) => ReceiverAnswer): void;
  /** Per streamed answer: how many bytes were written before the client went away, and whether all were. */
  streams: Array<{ written: number; finished: boolean }>;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that records every request and answers as a test scripts it. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const answers = new Map<string, (n: number) => ReceiverAnswer>();
  const streams: WebhookReceiver['streams'] = [];
  const hanging = new Set<ServerResponse>();

  const stream = (response: ServerResponse, total: number) => {
    const entry = { written: 0, finished: false };
    streams.push(entry);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    response.writeHead(200, { 'content-type': 'text/plain', 'content-length': total });
    const writeMore = () => {
      while (entry.written < total && !response.destroyed) {
        entry.written += chunk.length;
        if (!response.write(chunk)) return void response.once('drain', writeMore);
      }
      if (!response.destroyed) response.end(() => (entry.finished = true));
    };
    writeMore();
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      const answer = answers.get(path)?.(received.filter((entry) => entry.path === path).length) ?? { status: 200 };
      if ('hang' in answer) return void hanging.add(response);
      if ('redirect' in answer) return void response.writeHead(302, { location: answer.redirect }).end();
      if ('streamBytes' in answer) return stream(response, answer.streamBytes);
      response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(String(answer.status));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    to: (path) => received.filter((entry) => entry.path === path),
    answer: (path, answer) => void answers.set(path, answer),
    streams,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
