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
  conflict: { http: 409, grpc: Status.ALREADY_EXISTS, errorType: 'conflict', title: 'Conflict' },
  payloadTooLarge: { http: 413, grpc: Status.OUT_OF_RANGE, errorType: 'payload_too_large', title: 'Payload Too Large' },
  unsupportedMediaType: { http: 415, grpc: Status.INVALID_ARGUMENT, errorType: 'unsupported_media_type', title: 'Unsupported Media Type' },
  unprocessable: { http: 422, grpc: Status.FAILED_PRECONDITION, errorType: 'content_blocked', title: 'Unprocessable Content' },
  tooManyRequests: { http: 429, grpc: Status.RESOURCE_EXHAUSTED, errorType: 'quota_exceeded', title: 'Too Many Requests' },
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

export function kindForHttpStatus(status: number): ErrorKind | undefined {
  return (Object.keys(ERROR_KINDS) as ErrorKind[]).find((kind) => ERROR_KINDS[kind].http === status);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids typed uuid: anything else names no record (a 404, never a database error). */
export const isUuid = (value: string) => UUID.test(value);
