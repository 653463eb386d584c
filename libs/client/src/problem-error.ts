/** One entry of a validation problem's `errors`. */
export interface ProblemFieldError {
  path: string;
  message: string;
  code?: string;
}

/** An RFC 9457 body as the gateway writes it (API.md "Errors"); extensions beyond these fields vary by errorType. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errorType: string;
  traceId?: string | null;
  errors?: ProblemFieldError[];
  [extension: string]: unknown;
}

const STANDARD_FIELDS = new Set(['type', 'title', 'status', 'detail', 'instance', 'errorType', 'traceId']);

/** A gateway answer that is not a success, as an error to catch by `errorType`. */
export class HangarProblemError extends Error {
  override readonly name = 'HangarProblemError';
  readonly status: number;
  readonly errorType: string;
  readonly title: string;
  readonly detail: string;
  readonly type: string;
  readonly instance: string | undefined;
  readonly traceId: string | null;
  /** Validation failures, each naming the field. */
  readonly errors: ProblemFieldError[];
  /** Seconds the gateway asked to wait (`Retry-After`), when it did. */
  readonly retryAfter: number | undefined;
  /** Every field beyond the standard ones (`errors`, `quota`, `limit`, `estimatedPromptTokens`, …). */
  readonly extensions: Record<string, unknown>;

  constructor(problem: ProblemBody, retryAfter?: number) {
    super(`${problem.status} ${problem.errorType}: ${problem.detail}`);
    this.status = problem.status;
    this.errorType = problem.errorType;
    this.title = problem.title;
    this.detail = problem.detail;
    this.type = problem.type;
    this.instance = problem.instance;
    this.traceId = problem.traceId ?? null;
    this.errors = problem.errors ?? [];
    this.retryAfter = retryAfter;
    this.extensions = Object.fromEntries(Object.entries(problem).filter(([key]) => !STANDARD_FIELDS.has(key)));
  }
}

/** `Retry-After` in seconds (it may also be an HTTP date); undefined when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

const isProblem = (body: unknown): body is ProblemBody =>
  !!body &&
  typeof body === 'object' &&
  typeof (body as ProblemBody).errorType === 'string' &&
  typeof (body as ProblemBody).status === 'number';

/**
 * The error for a failed answer whose body was already read (`body`: parsed JSON, or text). An
 * answer that is neither problem+json nor OpenAI's error body (a proxy's page) still becomes one,
 * as `unexpected_response`.
 */
function problemError(response: Response, body: unknown): HangarProblemError {
  const retryAfter = retryAfterSeconds(response.headers);
  if (isProblem(body)) return new HangarProblemError(body, retryAfter);
  // The /v1 routes answer in OpenAI's error body; its code is the errorType.
  const openAI = (body as { error?: { message?: unknown; code?: unknown } } | undefined)?.error;
  if (openAI && typeof openAI.code === 'string' && typeof openAI.message === 'string')
    return new HangarProblemError(
      {
        type: `urn:hangar:problem:${openAI.code}`,
        title: response.statusText || 'Error',
        status: response.status,
        detail: openAI.message,
        errorType: openAI.code,
      },
      retryAfter,
    );
  const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
  return new HangarProblemError(
    {
      type: 'about:blank',
      title: response.statusText || 'Error',
      status: response.status,
      detail: text.slice(0, 500) || `HTTP ${response.status}`,
      errorType: 'unexpected_response',
    },
    retryAfter,
  );
}

/** An openapi-fetch result's data, or its failure as a HangarProblemError. */
export function dataOrThrow<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) throw problemError(result.response, result.error);
  return result.data as T;
}
