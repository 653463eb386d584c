import { EngineUnavailableError } from '@hangar/messaging';
import { Status } from 'nice-grpc-common';

/** One finding of a failed validation, addressed by a JSON path such as `model.fallbacks[0].model`. */
export interface FieldError {
  path: string;
  message: string;
  code?: string;
}

/**
 * Transport-neutral error. Services throw these; the gateway maps them to problem+json and the
 * gRPC layer to a status code, both through {@link ERROR_KINDS}.
 */
export class HangarError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Extra members of the problem body (`errors`, `quota`, `estimatedPromptTokens`, ...). */
    readonly extensions: Record<string, unknown> = {},
    /** Overrides the kind's default `errorType` (e.g. `session_owner_required` is a `forbidden`). */
    readonly errorType: string = ERROR_KINDS[kind].errorType,
  ) {
    super(message);
    this.name = 'HangarError';
  }

  get status(): number {
    return ERROR_KINDS[this.kind].http;
  }
}

export const ERROR_KINDS = {
  validation: { http: 400, grpc: Status.INVALID_ARGUMENT, errorType: 'validation_failed', title: 'Bad Request' },
  unauthorized: { http: 401, grpc: Status.UNAUTHENTICATED, errorType: 'unauthorized', title: 'Unauthorized' },
  forbidden: { http: 403, grpc: Status.PERMISSION_DENIED, errorType: 'forbidden', title: 'Forbidden' },
  notFound: { http: 404, grpc: Status.NOT_FOUND, errorType: 'not_found', title: 'Not Found' },
  notAcceptable: { http: 406, grpc: Status.INVALID_ARGUMENT, errorType: 'not_acceptable', title: 'Not Acceptable' },
  conflict: { http: 409, grpc: Status.ALREADY_EXISTS, errorType: 'conflict', title: 'Conflict' },
  payloadTooLarge: { http: 413, grpc: Status.OUT_OF_RANGE, errorType: 'payload_too_large', title: 'Payload Too Large' },
  unsupportedMediaType: { http: 415, grpc: Status.INVALID_ARGUMENT, errorType: 'unsupported_media_type', title: 'Unsupported Media Type' },
  unprocessable: { http: 422, grpc: Status.FAILED_PRECONDITION, errorType: 'content_blocked', title: 'Unprocessable Content' },
  tooManyRequests: { http: 429, grpc: Status.RESOURCE_EXHAUSTED, errorType: 'quota_exceeded', title: 'Too Many Requests' },
  upgradeRequired: { http: 426, grpc: Status.FAILED_PRECONDITION, errorType: 'upgrade_required', title: 'Upgrade Required' },
  notImplemented: { http: 501, grpc: Status.UNIMPLEMENTED, errorType: 'not_implemented', title: 'Not Implemented' },
  unavailable: { http: 503, grpc: Status.UNAVAILABLE, errorType: 'provider_unavailable', title: 'Service Unavailable' },
} as const satisfies Record<string, { http: number; grpc: Status; errorType: string; title: string }>;

export type ErrorKind = keyof typeof ERROR_KINDS;

export const validationError = (message: string, errors: FieldError[] = []) =>
  new HangarError('validation', message, errors.length ? { errors } : {});
export const notFound = (message: string) => new HangarError('notFound', message);
export const conflict = (message: string) => new HangarError('conflict', message);
export const forbidden = (message: string, errorType?: string) => new HangarError('forbidden', message, {}, errorType);
export const unauthorized = (message: string) => new HangarError('unauthorized', message);

/**
 * What an error thrown anywhere stands for at the edge: a HangarError as it is, a failure to reach
 * an engine (PostgreSQL, Redis, a socket) as `unavailable`, since the same request may succeed once
 * the engine is back; anything else is undefined, which the edge answers with a logged 500. The
 * gRPC middleware and the gateway's problem handler both ask here, so no call site classifies.
 */
export function classifyError(error: unknown): HangarError | undefined {
  if (error instanceof HangarError) return error;
  if (isConnectionFailure(error))
    return new HangarError('unavailable', 'a backing store is unavailable; retry shortly', {}, 'service_unavailable');
  return undefined;
}

/** Socket errors of Node (pg and redis connections surface them as they are). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
/**
 * SQLSTATEs that mean "no usable connection" rather than "this statement is wrong": class 08
 * (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now,
 * 53300 too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123]|53300)$/;
/** pg's own errors carry no code: a dropped connection, a client it dropped, a pool that could not connect in time. */
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/;

function isConnectionFailure(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 3) return false;
  if (error instanceof EngineUnavailableError) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (CONNECTION_MESSAGES.test(error.message)) return true;
  // Node reports a refused connection to every address of a host as one AggregateError.
  if (error instanceof AggregateError && error.errors.some((inner) => isConnectionFailure(inner, depth + 1))) return true;
  return isConnectionFailure(error.cause, depth + 1);
}

export function kindForHttpStatus(status: number): ErrorKind | undefined {
  return (Object.keys(ERROR_KINDS) as ErrorKind[]).find((kind) => ERROR_KINDS[kind].http === status);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids typed uuid: anything else names no record (a 404, never a database error). */
export const isUuid = (value: string) => UUID.test(value);
