import { RunExecutorServiceDefinition } from '@hangar/contracts';
import { createChannel, createGrpcServer, createLogger, createServiceClient, HangarError, type HangarGrpcServer } from '@hangar/platform';
import type { CallContext } from 'nice-grpc';
import { ClientError, Status } from 'nice-grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A client of a server that listens in the same process calls it directly (all-in-one), and what
 * either side sees is what gRPC over the network gives them: the same client talks to the same
 * server through a channel to an address this process does not host (`localhost:` for the
 * `127.0.0.1:` it listens on) as the network baseline.
 */

const caller = { tenantId: 't1', actor: 'test', labels: { team: 'a' } };
/** What the server saw of each call. */
const seen: Array<{ peer: string; tenantId: string | undefined; labels: unknown; agentName: string; parameters: unknown }> = [];
/** The signal of the streaming call that is running, and whether it yielded its last answer. */
let streaming: { signal: AbortSignal; yieldedAll: boolean } | undefined;

const unimplemented = Object.fromEntries(
  Object.keys(RunExecutorServiceDefinition.methods).map((name) => [
    name,
    () => {
      throw new Error(`${name} is not part of this test`);
    },
  ]),
);
const implementation = {
  ...unimplemented,
  async estimateRunPrompt(
    request: { run?: { agentName: string; parameters: unknown } },
    context: CallContext & { caller?: typeof caller },
  ) {
    const callerOf = (context as unknown as { caller: typeof caller }).caller;
    seen.push({
      peer: context.peer,
      tenantId: callerOf?.tenantId,
      labels: callerOf?.labels,
      agentName: request.run!.agentName,
      parameters: request.run!.parameters,
    });
    if (request.run!.agentName === 'missing') throw new HangarError('notFound', 'agent "missing" does not exist', { agent: 'missing' });
    if (request.run!.agentName === 'broken') throw new Error('a bug');
    return { estimatedPromptTokens: 42, wouldBeRejected: false, tokenizer: 'o200k' };
  },
  async *startRun(request: { agentName: string }, context: CallContext) {
    streaming = { signal: context.signal, yieldedAll: false };
    if (request.agentName === 'huge') yield { update: { $case: 'textDelta', value: { text: 'x'.repeat(5 * 1024 * 1024) } } };
    for (let index = 1; index <= 3; index++) yield { update: { $case: 'textDelta', value: { text: `${request.agentName} ${index}` } } };
    if (request.agentName === 'slow') await new Promise(() => {});
    yield { update: { $case: 'textDelta', value: { text: 'last' } } };
    streaming.yieldedAll = true;
  },
};

let server: HangarGrpcServer;
let port: number;
const hereClient = () => createServiceClient(RunExecutorServiceDefinition, createChannel(`127.0.0.1:${port}`));
const networkClient = () => createServiceClient(RunExecutorServiceDefinition, createChannel(`localhost:${port}`));
const startRequest = (agentName: string) => ({ agentName, messages: [], parameters: [], isStreaming: true, attachments: [] }) as never;

beforeAll(async () => {
  server = createGrpcServer(createLogger({ name: 'in-process-test', level: 'silent' }));
  server.server.add(RunExecutorServiceDefinition, implementation as never);
  port = await server.listen('127.0.0.1', 0);
});
afterAll(() => server?.shutdown());

describe('a client of a server in this process', () => {
  it('calls it without the network, with the caller and the decoded request the network would deliver', async () => {
    seen.length = 0;
    const request = { run: { ...(startRequest('a') as object), parameters: [{ name: 'p', value: 'v' }] } } as never;
    const here = await hereClient().estimateRunPrompt(request, { caller });
    const network = await networkClient().estimateRunPrompt(request, { caller });
    expect(here).toEqual(network);
    expect(here).toEqual({ estimatedPromptTokens: 42, wouldBeRejected: false, tokenizer: 'o200k' });
    expect(seen.map((call) => call.peer)).toEqual(['in-process', expect.stringMatching(/^(ipv[46]:)?(127\.0\.0\.1|\[::1\]):\d+$/)]);
    expect(seen[0]).toEqual({ ...seen[1], peer: 'in-process' });
    expect(seen[0]).toMatchObject({ tenantId: 't1', labels: { team: 'a' }, parameters: [{ name: 'p', value: 'v' }] });
  });

  it('gets the service’s problem as a HangarError, and an unexpected error as INTERNAL, as over the network', async () => {
    const failures = await Promise.all(
      [hereClient(), networkClient()].flatMap((client) =>
        ['missing', 'broken'].map((agentName) =>
          client.estimateRunPrompt({ run: startRequest(agentName) } as never, { caller }).catch((error: unknown) => error),
        ),
      ),
    );
    const [missingHere, brokenHere, missingNetwork, brokenNetwork] = failures;
    expect(missingHere).toBeInstanceOf(HangarError);
    expect(missingHere).toMatchObject({ kind: 'notFound', status: 404, extensions: { agent: 'missing' } });
    expect(missingHere).toEqual(missingNetwork);
    expect(brokenHere).toBeInstanceOf(ClientError);
    expect(brokenHere).toMatchObject({ code: Status.INTERNAL, details: (brokenNetwork as ClientError).details });
    expect(brokenNetwork).toMatchObject({ code: Status.INTERNAL });
  });

  it('refuses a request or an answer over 4 MiB with RESOURCE_EXHAUSTED, as grpc-js does', async () => {
    const tooLarge = async (client: ReturnType<typeof hereClient>) => {
      const request = { run: { ...(startRequest('a') as object), messages: [{ role: 'user', content: 'x'.repeat(5 * 1024 * 1024) }] } };
      const sent = await client.estimateRunPrompt(request as never, { caller }).catch((error: unknown) => error);
      const received = await (async () => {
        for await (const _message of client.startRun(startRequest('huge'), { caller }));
      })().catch((error: unknown) => error);
      return [sent, received] as ClientError[];
    };
    const failures = [...(await tooLarge(hereClient())), ...(await tooLarge(networkClient()))];
    expect(failures.map((failure) => [failure instanceof ClientError, failure.code])).toEqual(
      Array(4).fill([true, Status.RESOURCE_EXHAUSTED]),
    );
  });

  it('streams every answer of a server-streaming method', async () => {
    const texts = async (client: ReturnType<typeof hereClient>) => {
      const received: string[] = [];
      for await (const message of client.startRun(startRequest('s'), { caller }))
        if (message.update?.$case === 'textDelta') received.push(message.update.value.text);
      return received;
    };
    expect(await texts(hereClient())).toEqual(['s 1', 's 2', 's 3', 'last']);
    expect(await texts(networkClient())).toEqual(['s 1', 's 2', 's 3', 'last']);
  });

  it('lets the server run to its end, as over the network, when the client neither reads on nor closes the call', async () => {
    const answers = hereClient().startRun(startRequest('ahead'), { caller })[Symbol.asyncIterator]();
    expect((await answers.next()).value).toMatchObject({ update: { value: { text: 'ahead 1' } } });
    await expect.poll(() => streaming!.yieldedAll).toBe(true);
    expect(streaming!.signal.aborted).toBe(false);
  });

  it('cancels the server’s call when the client stops reading', async () => {
    for await (const message of hereClient().startRun(startRequest('early'), { caller })) {
      expect(message.update?.$case).toBe('textDelta');
      break;
    }
    // As over the network, the server learns of it from its signal (services stop on it, see closedOnCancel).
    expect(streaming!.signal.aborted).toBe(true);
  });

  it('rejects at once with an AbortError when the client aborts while the server is busy, and cancels the server', async () => {
    const abort = new AbortController();
    const received: string[] = [];
    const reading = (async () => {
      for await (const message of hereClient().startRun(startRequest('slow'), { caller, signal: abort.signal }))
        if (message.update?.$case === 'textDelta') received.push(message.update.value.text);
    })();
    await expect.poll(() => received.length).toBe(3);
    abort.abort();
    await expect(reading).rejects.toMatchObject({ name: 'AbortError' });
    expect(streaming!.signal.aborted).toBe(true);
  });

  it('goes over the network once the server stops listening here, and fails as a stopped server does', async () => {
    const client = hereClient();
    await server.shutdown();
    try {
      await expect(client.estimateRunPrompt({ run: startRequest('a') } as never, { caller })).rejects.toMatchObject({
        kind: 'unavailable',
        status: 503,
      });
    } finally {
      server = createGrpcServer(createLogger({ name: 'in-process-test', level: 'silent' }));
      server.server.add(RunExecutorServiceDefinition, implementation as never);
      port = await server.listen('127.0.0.1', 0);
    }
  });
});
