import type { NextFunction, Request, Response } from 'express';
import { jsonPath } from '@hangar/contracts';
import { notFound, validationError } from '@hangar/platform';

/** Deeper JSON than any Hangar document needs; deeper input would overflow recursive code (JSON.stringify) further on. */
export const MAX_JSON_DEPTH = 64;

/**
 * Where a value holds something no route accepts: a NUL character in a string or a key (PostgreSQL's
 * text and jsonb cannot hold one, so it is refused here, once, rather than failing in a store), or
 * nesting deeper than MAX_JSON_DEPTH. Iterative, so no input is too deep to inspect.
 */
export function inputProblem(value: unknown): { path: string; message: string } | undefined {
  const stack: Array<{ value: unknown; path: Array<string | number>; depth: number }> = [{ value, path: [], depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return { path: jsonPath(path), message: 'must not contain a NUL character (\\u0000)' };
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return { path: jsonPath(path), message: `is nested deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [key, item] of Object.entries(value)) {
      const itemPath = [...path, Array.isArray(value) ? Number(key) : key];
      if (key.includes('\u0000')) return { path: jsonPath(itemPath), message: 'must not contain a NUL character (\\u0000) in a key' };
      stack.push({ value: item, path: itemPath, depth: depth + 1 });
    }
  }
  return undefined;
}

/** Refuses a parsed JSON body no route accepts (400, naming the field), before any route reads it. */
export function jsonBodyGuard() {
  return (request: Request, _response: Response, next: NextFunction) => {
    const problem = request.body === undefined ? undefined : inputProblem(request.body);
    if (problem) throw validationError('the request body is not valid', [{ path: problem.path || 'body', message: problem.message }]);
    next();
  };
}

/** Path parameters and query strings: a NUL in a name is a record that cannot exist (404); in a query, a 400. */
export function checkPathAndQuery(params: Record<string, unknown>, query: unknown) {
  const inPath = inputProblem(params);
  if (inPath) throw notFound(`no record is named with a NUL character (${inPath.path})`);
  const inQuery = inputProblem(query);
  if (inQuery) throw validationError('the request query is not valid', [{ path: inQuery.path || 'query', message: inQuery.message }]);
}
