import { pino, type Logger } from 'pino';
import { currentSpanIds } from './telemetry.js';

export type { Logger };

/** JSON logs on stdout; every line written inside a span carries its trace_id and span_id. */
export function createLogger(options: { name: string; level?: string }): Logger {
  return pino({
    name: options.name,
    level: options.level ?? 'info',
    mixin: () => currentSpanIds(),
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.ApiKey'], censor: '[redacted]' },
  });
}
