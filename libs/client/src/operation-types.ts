import type { operations } from './generated/openapi.js';

/** Types of one operation's parts, read from the generated OpenAPI types by operationId. */
export type OperationId = keyof operations;

type ParametersOf<Id extends OperationId> = operations[Id]['parameters'];

export type PathParam<Id extends OperationId, Name extends string> =
  ParametersOf<Id> extends { path: infer Path } ? (Name extends keyof Path ? Path[Name] : string) : string;

export type QueryParams<Id extends OperationId> = ParametersOf<Id> extends { query?: infer Query } ? Exclude<Query, undefined> : never;

/** The JSON request body; `unknown` for a route that takes any JSON (validate reports its shape errors itself). */
export type JsonBody<Id extends OperationId> = operations[Id] extends { requestBody: { content: { 'application/json': infer Body } } }
  ? Body
  : unknown;

type SuccessStatus = 200 | 201 | 202 | 203 | 206;
type Responses<Id extends OperationId> = operations[Id]['responses'];
type JsonContent<Response> = Response extends { content: { 'application/json': infer Body } } ? Body : never;

/** The JSON body of the operation's success answers (of one status when given). */
export type JsonResult<Id extends OperationId, Status extends SuccessStatus = SuccessStatus> = JsonContent<
  Responses<Id>[Extract<keyof Responses<Id>, Status>]
>;

export interface CallOptions<Query = never> {
  query?: Query;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** A POST with a JSON body: with a key, it is retried safely (see retrying-fetch.ts). */
export interface IdempotentCallOptions<Query = never> extends CallOptions<Query> {
  idempotencyKey?: string;
}

/** How a generated method calls its route: its arguments are the path parameters in order, then the body, then options. */
export interface OperationEntry {
  operationId: string;
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  pathParams: readonly string[];
  body: 'none' | 'json' | 'form' | 'raw';
  response: 'json' | 'binary' | 'none';
}

export type OperationTable = Record<string, Record<string, OperationEntry>>;
