export {
  createHangarClient,
  credentialHeaders,
  type AgentRunHelpers,
  type HangarClient,
  type HangarClientOptions,
  type RunEventHelpers,
} from './hangar-client.js';
export { HangarProblemError, type ProblemBody, type ProblemFieldError } from './problem-error.js';
export { DEFAULT_RETRY_POLICY, type Fetch, type RetryPolicy } from './retrying-fetch.js';
export type { AcceptedRun, RunEvent, RunEventsOptions, RunRequest, RunResponse, RunStreamFrame } from './run-streams.js';
export { parseSse, type SseFrame } from './sse-parser.js';
export type { CallOptions, IdempotentCallOptions, JsonBody, JsonResult, OperationId, PathParam, QueryParams } from './operation-types.js';
export type { GeneratedGroups } from './generated/operations.js';
export type { components, operations, paths } from './generated/openapi.js';
