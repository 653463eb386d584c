import type { NextFunction, Request, Response } from 'express';
import type { ProblemBody } from './problem.js';

/**
 * The `/v1` routes answer errors in OpenAI's body `{ error: { message, type, code, param } }`
 * (API.md "OpenAI-compatible surface") so the official clients raise their typed errors; the
 * status, headers and `errorType` (as `code`) are those of the problem the rest of the API sends.
 */
export interface OpenAIErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

/** OpenAI's error `type` for a status; its clients choose their exception class by the status. */
function errorTypeFor(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

export const openAIError = (status: number, code: string, message: string, param: string | null = null): OpenAIErrorBody => ({
  error: { message, type: errorTypeFor(status), code, param },
});

export function openAIErrorBody(problem: ProblemBody): OpenAIErrorBody {
  const fieldErrors = problem.errors as Array<{ path: string; message: string }> | undefined;
  const detail = fieldErrors?.length
    ? `${problem.detail}: ${fieldErrors.map((error) => `${error.path} ${error.message}`).join('; ')}`
    : problem.detail;
  return openAIError(problem.status, problem.errorType, detail, fieldErrors?.[0]?.path ?? null);
}

/** Marks the requests below it: their errors are written in OpenAI's body (see sendProblem). */
export function openAIErrors() {
  return (_request: Request, response: Response, next: NextFunction) => {
    response.locals.openAIErrors = true;
    next();
  };
}
