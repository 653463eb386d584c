import type { AgentDefinition } from '@hangar/contracts';
import type { Caller } from '@hangar/platform';

/** What the run executor needs of the other services: the run engine's rules see only these ports. */

export interface AgentLoader {
  /** The agent's current definition and version, or its stored `version`; throws 404 for an unknown agent or version. */
  load(caller: Caller, name: string, version?: number): Promise<{ definition: AgentDefinition; version: number | null }>;
  /** The registry's prompt estimate (the numbers of the pre-flight check). */
  estimate(
    caller: Caller,
    name: string,
    messages: Array<{ role: string; content: string }>,
    parameters: ReadonlyMap<string, string>,
  ): Promise<PromptEstimate>;
}

/** A tenant's own binding of a model provider (API.md "Tenants"): it replaces the global one of the same name. */
export interface TenantProvider {
  kind: string;
  endpoint: string | null;
  /** The NAME of the configuration key holding the API key. */
  apiKeyKey: string;
}

/** What a run needs to know of its tenant: whether it is enabled, and its own provider bindings by name. */
export interface TenantSettings {
  enabled: boolean;
  providers: Record<string, TenantProvider>;
}

/** Governance's answer for the caller's tenant. */
export type TenantSettingsSource = (caller: Caller) => Promise<TenantSettings>;

/** A quota rule that is used up (governance's answer when it refuses a run). */
export interface ExceededQuota {
  name: string;
  metric: string;
  period: string;
  limit: number;
  used: number;
  resetsAt: string | undefined;
}

/** Governance's quota admission: undefined admits the run, a rule refuses it. */
export type QuotaAdmission = (caller: Caller, agentName: string) => Promise<ExceededQuota | undefined>;

/** Governance's quotas for spend outside any run (an image generation, speech, a transcription). */
export interface SpendQuotaGateway {
  /** The used-up Cost rule for every agent of the tenant, if any. */
  admit(caller: Caller): Promise<ExceededQuota | undefined>;
  /** Counts the spend once per id (a UUID). */
  count(caller: Caller, spend: { id: string; cost: number; at: Date }): Promise<void>;
}

export interface PromptEstimate {
  estimatedPromptTokens: number;
  contextWindowTokens: number | null;
  allowedPromptTokens: number | null;
  wouldBeRejected: boolean;
  tokenizer: string;
}

export interface SessionGateway {
  /** The session's history for a run of `agentName`; opens it when it does not exist yet. */
  open(caller: Caller, sessionId: string, agentName: string): Promise<Array<{ role: string; content: unknown }>>;
  /** The session's history without opening it; empty for a session that does not exist yet. */
  history(caller: Caller, sessionId: string): Promise<Array<{ role: string; content: unknown }>>;
  append(caller: Caller, sessionId: string, messages: Array<{ role: string; content: unknown; runId: string }>): Promise<void>;
}

export interface AttachmentContent {
  id: string;
  fileName: string;
  mediaType: string;
  bytes: Uint8Array;
}

export interface AttachmentReader {
  /** The attachment's bytes; throws 404 for an unknown (or another tenant's) attachment. */
  read(caller: Caller, id: string): Promise<AttachmentContent>;
}

/** A stored attachment as the attachment service describes it. */
export interface StoredAttachment {
  id: string;
  fileName: string;
  mediaType: string;
  size: number;
  sha256: string;
  sessionId: string | null;
  createdAt: string;
}

/** Stores bytes as an attachment of the caller's tenant (checked by signature like any upload). */
export interface AttachmentWriter {
  store(caller: Caller, file: { fileName: string; bytes: Buffer; sessionId?: string }, signal?: AbortSignal): Promise<StoredAttachment>;
  remove(caller: Caller, id: string): Promise<void>;
}

/** Writes an entry to the governance audit trail for the caller. */
export type { AuditWriter } from '@hangar/platform';

export type ToolCatalog = () => Promise<Map<string, { description: string; inputSchema: Record<string, unknown> }>>;

/** A skill as a run offers it to its model: instructions, resource names, and the scripts that may run now. */
export interface RunSkill {
  name: string;
  description: string;
  instructions: string;
  resourceNames: string[];
  runnableScripts: string[];
}

export interface ScriptOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  durationMs: number;
}

export interface SkillGateway {
  /** The named skills; a skill deleted since the agent was saved is left out. */
  forRun(caller: Caller, names: string[]): Promise<RunSkill[]>;
  readResource(caller: Caller, skillName: string, name: string): Promise<string>;
  /** Runs a script under the grants in force now; throws the skill service's refusal otherwise. */
  runScript(
    caller: Caller,
    skillName: string,
    scriptName: string,
    input: { args?: string[]; stdin?: string },
    signal?: AbortSignal,
  ): Promise<ScriptOutcome>;
}
