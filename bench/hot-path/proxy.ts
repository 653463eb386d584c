import { Agent, createServer, request } from 'node:http';

/**
 * The baseline: a raw node:http streaming proxy in its own process. `POST /api/agents/{name}/run`
 * becomes a streamed chat completion of model {name} at the mock, piped back as is (SSE mode), or
 * buffered and answered as one JSON body when the request has an Idempotency-Key (JSON mode).
 * `GET /api/runs/{id}/events` opens a 200 at once and pipes a call to model `hang` (idle streams).
 */
const upstream = new URL(`${process.env.BENCH_MOCK_URL}/chat/completions`);
const agent = new Agent({ keepAlive: true, maxSockets: Infinity });

const server = createServer((incoming, outgoing) => {
  const run = /^\/api\/agents\/([^/]+)\/run$/.exec(incoming.url ?? '');
  const idle = incoming.method === 'GET' && /^\/api\/runs\/[^/]+\/events$/.test(incoming.url ?? '');
  if (!run && !idle) return void outgoing.writeHead(404).end();
  const json = incoming.headers['idempotency-key'] !== undefined;
  if (idle) outgoing.writeHead(200, { 'content-type': 'text/event-stream' }).flushHeaders();
  incoming.resume(); // the client's body is not forwarded: the proxy asks for the named model
  const call = request(upstream, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (answer) => {
    if (json) {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => {
        const body = JSON.stringify({ status: 'Completed', upstreamBytes: Buffer.concat(chunks).length });
        outgoing.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' }).end(body);
      });
      return;
    }
    if (!outgoing.headersSent) outgoing.writeHead(answer.statusCode ?? 502, { 'content-type': 'text/event-stream' });
    answer.pipe(outgoing);
  });
  call.on('error', () => outgoing.destroy());
  outgoing.on('close', () => outgoing.writableFinished || call.destroy());
  call.end(JSON.stringify({ model: run ? run[1] : 'hang', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
