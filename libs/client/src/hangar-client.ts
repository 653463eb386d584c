import createClient, { type Client } from 'openapi-fetch';
import { operationTable, type GeneratedGroups } from './generated/operations.js';
import type { paths } from './generated/openapi.js';
import type { IdempotentCallOptions, OperationEntry } from './operation-types.js';
import { dataOrThrow } from './problem-error.js';
import { createRetryingFetch, DEFAULT_RETRY_POLICY, type Fetch, type RetryPolicy } from './retrying-fetch.js';
import {
  followRunEvents,
  streamRun,
  type AcceptedRun,
  type RunEvent,
  type RunEventsOptions,
  type RunRequest,
  type RunResponse,
  type RunStreamFrame,
} from './run-streams.js';

export interface HangarClientOptions {
  /** Where the gateway listens, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** `Hangar:Api:Prefix` of the gateway: put before `/api/...` and `/v1/...` paths (not before `/healthz`, `/readyz`). */
  prefix?: string;
  /** Sent as `Authorization: Bearer`: the static token, an API key or a JWT. */
  token?: string;
  /** Sent as `X-API-Key`. */
  apiKey?: string;
  /** The tenant to act in, sent in `tenantHeader`. */
  tenant?: string;
  /** `Tenancy:HeaderName` of the gateway (default `X-Hangar-Tenant`). */
  tenantHeader?: string;
  /** The fetch to send requests with (default the global one). */
  fetch?: Fetch;
  /** Retries of keyed POSTs (see retrying-fetch.ts); `false` sends each once. */
  retry?: Partial<RetryPolicy> | false;
}

export interface AgentRunHelpers {
  /** Runs an agent over SSE: an async iterable of its `{ event, data }` frames. Leaving the loop early cancels the run. */
  run(name: string, request: RunRequest, options?: { signal?: AbortSignal }): AsyncIterable<RunStreamFrame>;
  /** Runs an agent and answers once it ends: the JSON run response. A key is made when none is given, so it is retried safely. */
  runAndWait(name: string, request: RunRequest, options?: Omit<IdempotentCallOptions, 'query'>): Promise<RunResponse>;
  /** Queues a run (`Prefer: respond-async`): 202 with its id and where to follow it. */
  runAsync(name: string, request: RunRequest, options?: Omit<IdempotentCallOptions, 'query'>): Promise<AcceptedRun>;
}

export interface RunEventHelpers {
  /** A run's events (each with `seq`) until its terminal one, resuming by itself after a dropped connection. */
  events(runId: string, options?: RunEventsOptions): AsyncIterable<RunEvent>;
}

/** One group per route tag (generated/operations.ts); `agents` and `runs` add the streamed routes. */
export type HangarClient = Omit<GeneratedGroups, 'agents' | 'runs'> & {
  agents: GeneratedGroups['agents'] & AgentRunHelpers;
  runs: GeneratedGroups['runs'] & RunEventHelpers;
};

const belowPrefix = (path: string) => path.startsWith('/api/') || path.startsWith('/v1/');

/**
 * A raw client whose base is the gateway's address with `baseSuffix` after it. Two are made: one
 * with the prefix, for the routes that move with it, and one without, for /healthz, /readyz and
 * /metrics. (openapi-fetch's pathSerializer cannot carry the prefix: it is given the whole URL,
 * and only for paths with parameters.)
 */
function createRawClient(options: HangarClientOptions, baseSuffix: string): Client<paths> {
  const send = options.fetch ?? ((request: Request) => fetch(request));
  return createClient<paths>({
    baseUrl: `${options.baseUrl.replace(/\/+$/, '')}${baseSuffix}`,
    fetch: options.retry === false ? send : createRetryingFetch(send, { ...DEFAULT_RETRY_POLICY, ...options.retry }),
    headers: credentialHeaders(options),
  });
}

/** The headers that carry the options' credential and tenant, for a call made without the client (a raw fetch). */
export function credentialHeaders(
  options: Pick<HangarClientOptions, 'token' | 'apiKey' | 'tenant' | 'tenantHeader'>,
): Record<string, string> {
  return {
    ...(options.token && { Authorization: `Bearer ${options.token}` }),
    ...(options.apiKey && { 'X-API-Key': options.apiKey }),
    ...(options.tenant && { [options.tenantHeader ?? 'X-Hangar-Tenant']: options.tenant }),
  };
}

/** Calls one generated operation: `args` are its path parameters in order, then its body (when it takes one), then options. */
async function invoke(raw: Client<paths>, operation: OperationEntry, args: unknown[]): Promise<unknown> {
  const rest = args.slice(operation.pathParams.length);
  const body = operation.body === 'none' ? undefined : rest.shift();
  const options = (rest.shift() ?? {}) as IdempotentCallOptions<Record<string, unknown>>;
  const result = await raw.request(
    operation.method,
    operation.path as never,
    {
      params: { path: Object.fromEntries(operation.pathParams.map((name, index) => [name, args[index]])), query: options.query },
      body,
      // Form data and raw bodies go as they are; JSON is serialized by openapi-fetch.
      ...(operation.body !== 'json' && { bodySerializer: (value: unknown) => value }),
      headers: { ...options.headers, ...(options.idempotencyKey && { 'Idempotency-Key': options.idempotencyKey }) },
      parseAs: operation.response === 'binary' ? 'blob' : 'json',
      signal: options.signal,
    } as never,
  );
  return dataOrThrow(result);
}

function generatedGroups(prefixed: Client<paths>, root: Client<paths>): GeneratedGroups {
  const groups = Object.entries(operationTable as Record<string, Record<string, OperationEntry>>).map(([group, operations]) => [
    group,
    Object.fromEntries(
      Object.entries(operations).map(([name, operation]) => [
        name,
        (...args: unknown[]) => invoke(belowPrefix(operation.path) ? prefixed : root, operation, args),
      ]),
    ),
  ]);
  return Object.fromEntries(groups) as GeneratedGroups;
}

function agentRunHelpers(raw: Client<paths>): AgentRunHelpers {
  const runJson = async (name: string, request: RunRequest, headers: Record<string, string>, signal?: AbortSignal) => {
    return dataOrThrow(await raw.POST('/api/agents/{name}/run', { params: { path: { name } }, body: request, headers, signal }));
  };
  return {
    run: (name, request, options = {}) => streamRun(raw, name, request, options.signal),
    async runAndWait(name, request, options = {}) {
      // The key asks the gateway for one JSON answer instead of SSE.
      const headers = { ...options.headers, 'Idempotency-Key': options.idempotencyKey ?? crypto.randomUUID() };
      return (await runJson(name, request, headers, options.signal)) as RunResponse;
    },
    async runAsync(name, request, options = {}) {
      const key = options.idempotencyKey && { 'Idempotency-Key': options.idempotencyKey };
      return (await runJson(name, request, { ...options.headers, Prefer: 'respond-async', ...key }, options.signal)) as AcceptedRun;
    },
  };
}

/**
 * The gateway's TypeScript client: `client.agents.create(definition)`, `client.agents.run(name,
 * request)`, `client.runs.get(id)`, `client.runs.events(id, { lastEventId })`, … A failed answer
 * throws a HangarProblemError.
 */
export function createHangarClient(options: HangarClientOptions): HangarClient {
  // Routes under /api/ and /v1/ move with Hangar:Api:Prefix; /healthz, /readyz and /metrics stay at the root.
  const raw = createRawClient(options, options.prefix ?? '');
  const groups = generatedGroups(raw, createRawClient(options, ''));
  return {
    ...groups,
    agents: { ...groups.agents, ...agentRunHelpers(raw) },
    runs: { ...groups.runs, events: (runId, eventOptions) => followRunEvents(raw, runId, eventOptions) },
  };
}
