import { expect } from 'vitest';
import type { HttpResult } from './hangar.js';

/** Asserts an RFC 9457 problem+json answer with the given status and errorType. */
export function expectProblem(result: HttpResult, status: number, errorType: string) {
  expect(result.status, result.text).toBe(status);
  expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(result.body).toMatchObject({ status, errorType });
}
