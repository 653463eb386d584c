import type { NextFunction, Request, Response } from 'express';
import { httpServerDurations, type ProcessMetrics } from '@hangar/platform';

/**
 * Records each answered request under its route's pattern (`/api/agents/:name`, below the prefix),
 * so a path full of ids adds no series; a request no route matched is `unmatched`.
 */
export function httpDurations(metrics: ProcessMetrics) {
  const record = httpServerDurations(metrics.meter);
  return (request: Request, response: Response, next: NextFunction) => {
    const started = performance.now();
    response.once('close', () => {
      const route = (request.route?.path as string | undefined) ?? 'unmatched';
      record((performance.now() - started) / 1000, { method: request.method, route, status: response.statusCode });
    });
    next();
  };
}
