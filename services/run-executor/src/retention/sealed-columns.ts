import type { SealedColumn } from '@hangar/platform';
import { sql } from '@hangar/storage';

/** A run's tenant, for the tables that name only the run. */
const tenantOfRun = (schema: string) => sql<string>`(select r.tenant_id from ${sql.id(schema, 'runs')} as r where r.id = t.run_id)`;
const toolEvent = sql<boolean>`(t.type like 'tool.%' or t.type like 'approval.%')`;

/** The run executor's protected columns (API.md "Content protection"), for the re-encryption job. */
export const RUN_SEALED_COLUMNS: SealedColumn[] = [
  { table: 'run_inputs', key: ['run_id'], column: 'input', protects: 'RunInputs', json: true, tenant: tenantOfRun },
  {
    table: 'run_events',
    key: ['run_id', 'seq'],
    column: 'data',
    protects: 'RunEventData',
    json: true,
    tenant: tenantOfRun,
    where: sql`not ${toolEvent}`,
  },
  {
    table: 'run_events',
    key: ['run_id', 'seq'],
    column: 'data',
    protects: 'ToolPayloads',
    json: true,
    tenant: tenantOfRun,
    where: toolEvent,
  },
  // A span may hold a prompt or an answer (Observability:RecordSensitiveData): sealed like run event data.
  {
    table: 'run_spans',
    key: ['run_id', 'span_id'],
    column: 'attributes',
    protects: 'RunEventData',
    json: true,
    tenant: (schema) => sql`t.tenant_id`,
  },
  { table: 'run_scores', key: ['id'], column: 'comment', protects: 'RunScoreComments', json: false, tenant: tenantOfRun },
  { table: 'run_approvals', key: ['id'], column: 'args', protects: 'ApprovalArguments', json: true, tenant: tenantOfRun },
  // A workflow run's input is a run input; where it stands, its output and its answers are run event data.
  { table: 'workflow_runs', key: ['run_id'], column: 'input', protects: 'RunInputs', json: true, tenant: () => sql`t.tenant_id` },
  { table: 'workflow_runs', key: ['run_id'], column: 'state', protects: 'RunEventData', json: true, tenant: () => sql`t.tenant_id` },
  { table: 'workflow_runs', key: ['run_id'], column: 'output', protects: 'RunEventData', json: true, tenant: () => sql`t.tenant_id` },
  { table: 'workflow_checkpoints', key: ['id'], column: 'state', protects: 'RunEventData', json: true, tenant: tenantOfRun },
  { table: 'workflow_requests', key: ['id'], column: 'answer', protects: 'RunEventData', json: true, tenant: tenantOfRun },
  { table: 'workflow_requests', key: ['id'], column: 'prompt', protects: 'RunEventData', json: false, tenant: tenantOfRun },
];
