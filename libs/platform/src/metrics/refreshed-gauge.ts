import type { Meter } from '@opentelemetry/api';
import type { Logger } from '../logging.js';

/**
 * An observable gauge whose values are read from a store every `refreshMs` (not at each scrape,
 * so a scraper never waits for a query and a fleet of scrapers costs one query per interval).
 * A series read once is reported (0) until the process stops, so it never vanishes mid-graph.
 */
export function refreshedGauge(options: {
  meter: Meter;
  name: string;
  description: string;
  refreshMs: number;
  read: () => Promise<Array<{ labels: Record<string, string>; value: number }>>;
  logger: Logger;
}): { stop(): void } {
  const latest = new Map<string, { labels: Record<string, string>; value: number }>();
  const gauge = options.meter.createObservableGauge(options.name, { description: options.description });
  gauge.addCallback((result) => {
    for (const { labels, value } of latest.values()) result.observe(value, labels);
  });
  const refresh = async () => {
    try {
      const points = await options.read();
      for (const point of latest.values()) point.value = 0;
      for (const point of points) latest.set(JSON.stringify(point.labels), point);
    } catch (error) {
      options.logger.warn({ err: error, gauge: options.name }, 'gauge values could not be read; the last ones stay');
    }
  };
  void refresh();
  const timer = setInterval(() => void refresh(), options.refreshMs);
  return { stop: () => clearInterval(timer) };
}

/**
 * Keeps at most `max` lanes as series of their own (the first ones seen, so a series keeps its
 * meaning); the depth of every further lane is added to one series named `other`.
 */
export function foldLanes(max: number) {
  const own = new Set<string>();
  return (depths: Record<string, number>): Record<string, number> => {
    const folded: Record<string, number> = {};
    for (const [lane, depth] of Object.entries(depths).sort(([a], [b]) => a.localeCompare(b))) {
      if (!own.has(lane) && own.size < max) own.add(lane);
      const series = own.has(lane) ? lane : 'other';
      folded[series] = (folded[series] ?? 0) + depth;
    }
    return folded;
  };
}
