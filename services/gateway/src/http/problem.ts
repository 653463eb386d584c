import type { NextFunction, Request, Response } from 'express';
import { openAIErrorBody } from './openai-error.js';
import { ERROR_KINDS, classifyError, currentTraceId, kindForHttpStatus, type Logger } from '@hangar/platform';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  errorType: string;
  traceId: string | null;
  [extension: string]: unknown;
}

export function problemBody(
  request: Request,
  status: number,
  errorType: string,
  detail: string,
  extensions: Record<string, unknown> = {},
): ProblemBody {
  const kind = kindForHttpStatus(status);
  return {
    type: `urn:hangar:problem:${errorType}`,
    title: kind ? ERROR_KINDS[kind].title : (STATUS_TITLES[status] ?? 'Error'),
    status,
    detail,
    instance: request.originalUrl.split('?')[0],
    errorType,
    traceId: currentTraceId() ?? null,
    ...extensions,
  };
}

const STATUS_TITLES: Record<number, string> = { 405: 'Method Not Allowed', 500: 'Internal Server Error' };

export function sendProblem(request: Request, response: Response, body: ProblemBody, headers: Record<string, string> = {}) {
  if (response.locals.openAIErrors) {
    // OpenAI's clients retry 429 and 5xx unless told not to: a used-up quota stays used up, and a run that
    // failed has run (retrying would run it again).
    const final = body.errorType === 'quota_exceeded' || body.runId !== undefined;
    response
      .status(body.status)
      .set({ ...headers, ...(final && { 'x-should-retry': 'false' }) })
      .json(openAIErrorBody(body));
    return;
  }
  response.status(body.status).set(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}

/**
 * Errors raised by express before a route runs (its JSON parser, its path decoding), translated to
 * the statuses API.md names. They are the client's: http-errors marks them `expose` with a 4xx.
 */
function requestProblem(error: { type?: string; status?: number; expose?: boolean; message?: string }) {
  switch (error.type) {
    case 'entity.parse.failed':
      return { status: 400, errorType: 'validation_failed', detail: 'the request body is not valid JSON' };
    case 'entity.too.large':
      return { status: 413, errorType: 'payload_too_large', detail: 'the request body is too large' };
    case 'charset.unsupported':
    case 'encoding.unsupported':
      return { status: 415, errorType: 'unsupported_media_type', detail: error.message ?? 'unsupported body encoding' };
    case 'request.aborted':
      return { status: 400, errorType: 'validation_failed', detail: 'the request body was cut off' };
    case 'request.size.invalid':
      return { status: 400, errorType: 'validation_failed', detail: 'the request body is shorter or longer than its Content-Length' };
  }
  // A path segment that is not valid percent-encoding (`%ZZ`, `%C0%AF`) names no record (docs/decisions.md).
  if (error.status === 400 && error instanceof URIError)
    return { status: 404, errorType: 'not_found', detail: 'the path is not valid percent-encoding; no record has that name' };
  // A body that does not decode as its Content-Encoding says (`gzip` that is not gzip).
  if (error.expose && error.status === 400)
    return { status: 400, errorType: 'validation_failed', detail: 'the request body could not be decoded' };
  return undefined;
}

let abortedRequests = 0;
/** Requests whose client went away mid-body since the process started (not a server error). */
export const abortedRequestCount = () => abortedRequests;

/** The last express middleware: every error becomes problem+json; a 5xx never shows internals. */
export function problemHandler(logger: Logger) {
  return (error: unknown, request: Request, response: Response, _next: NextFunction) => {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    // Before classifying: a client that hung up mid-body raises ECONNABORTED, which is not an engine's fault.
    const clientProblem = requestProblem(error as { type?: string });
    if (clientProblem) {
      if ((error as { type?: string }).type === 'request.aborted') {
        abortedRequests += 1;
        logger.debug({ method: request.method, path: request.path, abortedRequests }, 'request body cut off by the client');
      }
      sendProblem(request, response, problemBody(request, clientProblem.status, clientProblem.errorType, clientProblem.detail));
      return;
    }
    // The client left and its work stopped with it (the route's signal aborted the call): nobody
    // reads an answer, and no server fault happened.
    if ((error as Error | undefined)?.name === 'AbortError' && request.socket?.destroyed) {
      logger.debug({ method: request.method, path: request.path }, 'request stopped: the client left');
      response.destroy();
      return;
    }
    const known = classifyError(error);
    if (known) {
      const headers: Record<string, string> = known.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
      const resetsAt = known.status === 429 ? Date.parse(String(known.extensions.resetsAt)) : Number.NaN;
      if (!Number.isNaN(resetsAt)) headers['Retry-After'] = String(Math.max(1, Math.ceil((resetsAt - Date.now()) / 1000)));
      if (known !== error)
        logger.warn({ err: error, method: request.method, path: request.path }, 'answered 503: a backing store is unreachable');
      else if (known.status >= 500)
        logger.info({ errorType: known.errorType, detail: known.message }, 'request answered with a classified 5xx');
      sendProblem(request, response, problemBody(request, known.status, known.errorType, known.message, known.extensions), headers);
      return;
    }
    logger.error({ err: error, method: request.method, path: request.path }, 'unhandled error');
    sendProblem(
      request,
      response,
      problemBody(request, 500, 'internal_error', 'An unexpected error occurred. Quote the traceId when reporting it.'),
    );
  };
}

/**
 * The raw answer to a request that is not valid HTTP (framing, header syntax, oversized headers):
 * Node's server answers it before express sees it, so it is written here, still as problem+json.
 */
export function malformedHttpAnswer(error: NodeJS.ErrnoException): string {
  const [status, title, errorType] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'validation_failed']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'validation_failed']
        : [400, 'Bad Request', 'validation_failed'];
  const body = JSON.stringify({
    type: `urn:hangar:problem:${errorType}`,
    title,
    status,
    detail: 'the request is not valid HTTP/1.1',
    instance: '/',
    errorType,
    traceId: null,
  });
  return `HTTP/1.1 ${status} ${title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}
