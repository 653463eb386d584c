import { createLogger, createProcessMetrics, foldLanes, maskedConfiguration, metricsScrapeAllowed, refreshedGauge } from '@hangar/platform';
import { parsePrometheusText, sampleSum } from '@hangar/testing';
import { describe, expect, it } from 'vitest';

const logger = createLogger({ name: 'metrics-test', level: 'silent' });

describe('process metrics', () => {
  it('folds lanes beyond the cardinality into "other", keeping the first ones seen', () => {
    const fold = foldLanes(2);
    expect(fold({ b: 1, a: 2 })).toEqual({ a: 2, b: 1 });
    expect(fold({ c: 5, a: 1, d: 4 })).toEqual({ a: 1, other: 9 });
  });

  it('reports a refreshed gauge from its last read, a series read once staying at 0', async () => {
    const metrics = createProcessMetrics('test');
    const reads = [[{ labels: { lane: 'a' }, value: 3 }], []];
    const gauge = refreshedGauge({
      meter: metrics.meter,
      name: 'hangar_test_depth',
      description: 'test',
      refreshMs: 20,
      read: async () => reads.shift() ?? [],
      logger,
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(sampleSum(parsePrometheusText(await metrics.scrape()), 'hangar_test_depth', { lane: 'a' })).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const later = parsePrometheusText(await metrics.scrape());
    expect(later.get('hangar_test_depth')?.samples).toEqual([{ name: 'hangar_test_depth', labels: { lane: 'a' }, value: 0 }]);
    gauge.stop();
    await metrics.shutdown();
  });

  it('lets a scrape through without a metrics token, and only with it once set', () => {
    expect(metricsScrapeAllowed(null, undefined)).toBe(true);
    expect(metricsScrapeAllowed('metrics-token-0123456789', undefined)).toBe(false);
    expect(metricsScrapeAllowed('metrics-token-0123456789', 'Bearer other')).toBe(false);
    expect(metricsScrapeAllowed('metrics-token-0123456789', 'Bearer metrics-token-0123456789')).toBe(true);
  });
});

describe('masked configuration', () => {
  it('masks secret keys, secret maps and passwords in connection strings, and nothing else', () => {
    const masked = maskedConfiguration({
      Hangar: { Api: { AuthToken: 't', MetricsToken: null, Prefix: '/x' }, WebhookSecrets: { a: 'w' }, McpSecrets: { b: 'm' } },
      Providers: { p: { ApiKey: 'k', Endpoint: 'https://u:pw@host/v1', DefaultModel: 'm' } },
      Stores: { Postgres: { ConnectionString: 'Host=h;Username=u;Password=pw;Database=d' } },
      Redis: { ConnectionString: 'redis://:pw@host:6379' },
      Mcp: { McpSecretsPrefix: 'Hangar:McpSecrets:' },
      ContentProtection: { Keys: { k1: 'Hangar:ContentKeys:k1' }, ActiveKeyId: 'k1' },
    });
    expect(masked).toEqual({
      Hangar: { Api: { AuthToken: '***', MetricsToken: null, Prefix: '/x' }, WebhookSecrets: { a: '***' }, McpSecrets: { b: '***' } },
      Providers: { p: { ApiKey: '***', Endpoint: 'https://u:***@host/v1', DefaultModel: 'm' } },
      Stores: { Postgres: { ConnectionString: 'Host=h;Username=u;Password=***;Database=d' } },
      Redis: { ConnectionString: 'redis://:***@host:6379' },
      Mcp: { McpSecretsPrefix: 'Hangar:McpSecrets:' },
      ContentProtection: { Keys: { k1: '***' }, ActiveKeyId: 'k1' },
    });
  });
});

describe('the strict Prometheus text parser', () => {
  it.each([
    ['a bad value', 'x_total 1x'],
    ['a bad label', 'x_total{a=b} 1'],
    ['a second TYPE', '# TYPE x counter\n# TYPE x counter\nx 1'],
    ['a TYPE after samples', 'x 1\n# TYPE x counter'],
    ['samples apart', 'x 1\ny 1\nx{a="b"} 2'],
    ['a histogram without +Inf', '# TYPE h histogram\nh_bucket{le="1"} 1\nh_count 1\nh_sum 1'],
    ['a histogram count that disagrees', '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 1\nh_sum 1'],
  ])('refuses %s', (_, text) => {
    expect(() => parsePrometheusText(text)).toThrow();
  });
});
