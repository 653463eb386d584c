import pretty from 'pino-pretty';
import { pino, type Logger } from 'pino';
import { currentSpanIds } from './telemetry.js';

export type { Logger };

/** `Logging:Format`: `auto` writes readable lines on a terminal and JSON anywhere else (CI, containers, tests). */
export type LogFormat = 'auto' | 'json' | 'pretty';

export function resolveLogFormat(format: LogFormat = 'auto', isTerminal = process.stdout.isTTY === true): 'json' | 'pretty' {
  if (format !== 'auto') return format;
  return isTerminal ? 'pretty' : 'json';
}

/** Logs on stdout, JSON unless `format` resolves to pretty; every line written inside a span carries its trace_id and span_id. */
export function createLogger(options: { name: string; level?: string; format?: LogFormat }): Logger {
  const settings = {
    name: options.name,
    level: options.level ?? 'info',
    mixin: () => currentSpanIds(),
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.ApiKey'], censor: '[redacted]' },
  };
  if (resolveLogFormat(options.format) === 'json') return pino(settings);
  // In this thread and synchronous, so the last lines before an exit are written (a transport's worker may not flush them).
  return pino(settings, pretty({ sync: true, singleLine: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' }));
}
