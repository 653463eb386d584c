import { jsonb, type Kysely } from '@hangar/storage';
import { PLAIN_CONTENT, type ContentCipher } from '@hangar/platform';
import type { RunDatabase } from '../database.js';

/** One kept span of a run, as its trace shows it (API.md "Operations"). */
export interface RunSpan {
  spanId: string;
  traceId: string;
  parentSpanId: string | null;
  name: string;
  startTime: string;
  endTime: string;
  status: 'Unset' | 'Ok' | 'Error';
  attributes: Record<string, unknown>;
}

/** A run's kept spans (`run_spans`); attributes sealed like run event data when content protection is on. */
export function createSpanRepository(db: Kysely<RunDatabase>, cipher: ContentCipher = PLAIN_CONTENT) {
  return {
    async insert(tenantId: string, runId: string, spans: RunSpan[]): Promise<void> {
      if (!spans.length) return;
      await db
        .insertInto('run_spans')
        .values(
          spans.map((span) => ({
            tenant_id: tenantId,
            run_id: runId,
            span_id: span.spanId,
            trace_id: span.traceId,
            parent_span_id: span.parentSpanId,
            name: span.name,
            start_time: new Date(span.startTime),
            end_time: new Date(span.endTime),
            status: span.status,
            attributes: jsonb(cipher.sealJson(tenantId, 'RunEventData', span.attributes)),
          })),
        )
        .onConflict((conflict) => conflict.columns(['run_id', 'span_id']).doNothing())
        .execute();
    },

    /** The run's spans in start order; empty when none was kept. */
    async list(tenantId: string, runId: string): Promise<RunSpan[]> {
      const rows = await db
        .selectFrom('run_spans')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('run_id', '=', runId)
        .orderBy('start_time')
        .orderBy('span_id')
        .execute();
      return rows.map((row) => ({
        spanId: row.span_id,
        traceId: row.trace_id,
        parentSpanId: row.parent_span_id,
        name: row.name,
        startTime: row.start_time.toISOString(),
        endTime: row.end_time.toISOString(),
        status: row.status,
        attributes: cipher.openJson(tenantId, 'RunEventData', row.attributes) as Record<string, unknown>,
      }));
    },
  };
}

export type SpanRepository = ReturnType<typeof createSpanRepository>;
