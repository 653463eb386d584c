import type { Generated } from '@hangar/storage';
import type { ApprovalStatus } from './approvals/approval.model.js';

/** The run executor's tables (one Kysely schema for every repository of this service). */
export type Numeric = string | number | bigint;

export interface RunDatabase {
  runs: {
    id: string;
    tenant_id: string;
    agent_name: string;
    agent_version: number | null;
    session_id: string | null;
    status: number;
    kind: string;
    is_streaming: boolean;
    started_at: Generated<Date>;
    completed_at: Date | null;
    input_tokens: Generated<Numeric>;
    output_tokens: Generated<Numeric>;
    cached_input_tokens: Generated<Numeric>;
    reasoning_tokens: Generated<Numeric>;
    total_tokens: Generated<Numeric>;
    input_cost: Numeric | null;
    output_cost: Numeric | null;
    cached_input_cost: Numeric | null;
    total_cost: Numeric | null;
    cost_currency: string | null;
    input_price_per_mtok: Numeric | null;
    output_price_per_mtok: Numeric | null;
    cached_input_price_per_mtok: Numeric | null;
    model_provider: string | null;
    model: string | null;
    error_type: string | null;
    error_message: string | null;
    parent_run_id: string | null;
    root_run_id: string;
    depth: Generated<number>;
    user_id: string | null;
    labels: Generated<Record<string, string>>;
    heartbeat_at: Date | null;
  };
  run_events: { run_id: string; seq: number; type: string; at: Generated<Date>; data: unknown };
  run_event_outbox: { id: Generated<string>; root_run_id: string; payload: unknown };
  run_event_outbox_lease: { id: number; owner: string | null; expires_at: Date | null };
  run_approvals: {
    id: string;
    run_id: string;
    tool_call_id: string;
    tool_name: string;
    args: unknown;
    status: ApprovalStatus;
    decided_by: string | null;
    comment: string | null;
    created_at: Generated<Date>;
    expires_at: Date;
    decided_at: Date | null;
  };
  run_inputs: { run_id: string; input: unknown; recorded_at: Generated<Date> };
  run_continuations: { run_id: string; payload: unknown; attempts: Generated<number>; created_at: Generated<Date> };
  jobs: {
    id: string;
    tenant_id: string;
    run_id: string;
    lane: Generated<string>;
    payload: unknown;
    status: 'queued' | 'leased' | 'done' | 'failed';
    attempts: Generated<number>;
    lease_owner: string | null;
    lease_expires_at: Date | null;
    last_error: string | null;
    max_attempts: number | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  schedules: {
    id: string;
    tenant_id: string;
    name: string;
    handler_key: string;
    cron: string;
    time_zone: string;
    payload: unknown;
    enabled: boolean;
    saved_by: unknown;
    next_fire_at: Date | null;
    last_fire_at: Date | null;
    last_run_id: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  schedule_firings: { schedule_id: string; fire_at: Date; run_id: string };
  scheduler_lease: { id: number; owner: string | null; expires_at: Date | null };
  run_scores: {
    id: string;
    run_id: string;
    message_key: string;
    name: string;
    kind: string;
    value: number | null;
    text_value: string | null;
    source: string;
    author: string;
    comment: string | null;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  run_spans: {
    tenant_id: string;
    run_id: string;
    span_id: string;
    trace_id: string;
    parent_span_id: string | null;
    name: string;
    start_time: Date;
    end_time: Date;
    status: 'Unset' | 'Ok' | 'Error';
    /** Sealed when content protection is on (a span may hold a prompt with RecordSensitiveData). */
    attributes: unknown;
  };
  workflows: { tenant_id: string; name: string; version: number; definition: unknown; created_at: Generated<Date> };
  workflow_runs: {
    run_id: string;
    tenant_id: string;
    workflow_name: string;
    workflow_version: number;
    definition: unknown;
    input: unknown;
    parameters: unknown;
    caller: unknown;
    state: unknown;
    /** ready (an instance may lease it) → waiting (for a human answer) → ready … → ended. */
    phase: 'ready' | 'waiting' | 'ended';
    lease_owner: string | null;
    lease_expires_at: Date | null;
    active_ms: Generated<Numeric>;
    output: unknown;
    created_at: Generated<Date>;
    updated_at: Generated<Date>;
  };
  workflow_checkpoints: {
    id: string;
    run_id: string;
    super_step: number;
    state: unknown;
    created_at: Generated<Date>;
    run_ended_at: Date | null;
  };
  voice_conversations: {
    id: string;
    tenant_id: string;
    agent_name: string;
    session_id: string;
    turns: Generated<number>;
    started_at: Generated<Date>;
    /** Beaten while the conversation is open; a row whose instance died stops counting once it is stale. */
    last_seen_at: Generated<Date>;
    ended_at: Date | null;
    close_code: number | null;
  };
  workflow_requests: {
    id: string;
    run_id: string;
    super_step: number;
    step_id: string;
    prompt: string;
    status: 'Pending' | 'Answered';
    answer: unknown;
    answered_by: string | null;
    created_at: Generated<Date>;
    answered_at: Date | null;
  };
}
