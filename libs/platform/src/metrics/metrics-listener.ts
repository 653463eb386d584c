import { createServer } from 'node:http';
import type { Logger } from '../logging.js';
import { metricsScrapeAllowed, PROMETHEUS_CONTENT_TYPE, type ProcessMetrics } from './process-metrics.js';

/**
 * `GET /metrics` on a port of its own, for a service process that has no gateway in front of it
 * (`Services:<Name>:MetricsPort`). Anything else is 404.
 */
export async function listenForScrapes(options: {
  metrics: ProcessMetrics;
  host: string;
  port: number;
  metricsToken: string | null;
  logger: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') return void response.writeHead(404).end();
    if (!metricsScrapeAllowed(options.metricsToken, request.headers.authorization)) {
      return void response.writeHead(401, { 'WWW-Authenticate': 'Bearer' }).end();
    }
    options.metrics.scrape().then(
      (text) => response.writeHead(200, { 'Content-Type': PROMETHEUS_CONTENT_TYPE }).end(text),
      (error) => {
        options.logger.warn({ err: error }, 'metrics could not be collected');
        response.writeHead(500).end();
      },
    );
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : options.port);
    });
  });
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
