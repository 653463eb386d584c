import type { AgentDefinition, AgentDefinitionRecord, ValidationMessage, ValidationReport } from './agents.schema.js';
import * as pb from './generated/hangar/v1/agent_registry.js';

/** Conversions between the domain shapes (API.md JSON) and the generated gRPC messages. */

const FORMAT_TO_PROTO = {
  Text: pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_TEXT,
  Json: pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_JSON,
  JsonSchema: pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_JSON_SCHEMA,
} as const;

const FORMAT_FROM_PROTO: Record<number, AgentDefinition['responseFormat']['kind']> = {
  [pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_TEXT]: 'Text',
  [pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_JSON]: 'Json',
  [pb.ResponseFormatKind.RESPONSE_FORMAT_KIND_JSON_SCHEMA]: 'JsonSchema',
};

export function definitionToProto(definition: AgentDefinition): pb.AgentDefinition {
  return {
    name: definition.name,
    description: definition.description ?? undefined,
    instructions: definition.instructions ?? undefined,
    model: {
      provider: definition.model.provider,
      model: definition.model.model,
      fallbacks: definition.model.fallbacks,
      providerSettings: definition.model.providerSettings,
    },
    tools: definition.tools,
    skills: definition.skills,
    agents: definition.agents,
    responseFormat: { kind: FORMAT_TO_PROTO[definition.responseFormat.kind], schema: definition.responseFormat.schema },
    parameters: definition.parameters.map((parameter) => ({
      name: parameter.name,
      description: parameter.description ?? undefined,
      required: parameter.required,
    })),
  };
}

export function definitionFromProto(message: pb.AgentDefinition): AgentDefinition {
  const format = message.responseFormat;
  const kind = (format && FORMAT_FROM_PROTO[format.kind]) || 'Text';
  return {
    name: message.name,
    description: message.description ?? null,
    instructions: message.instructions ?? null,
    model: {
      provider: message.model?.provider ?? '',
      model: message.model?.model ?? '',
      fallbacks: (message.model?.fallbacks ?? []).map(({ provider, model }) => ({ provider, model })),
      providerSettings: message.model?.providerSettings ?? {},
    },
    tools: message.tools,
    skills: message.skills,
    agents: message.agents,
    responseFormat: kind === 'JsonSchema' ? { kind, schema: format?.schema ?? {} } : { kind },
    parameters: message.parameters.map((parameter) => ({
      name: parameter.name,
      description: parameter.description ?? null,
      required: parameter.required,
    })),
  };
}

export function recordToProto(record: AgentDefinitionRecord): pb.AgentDefinitionRecord {
  return {
    definition: definitionToProto(record.definition),
    version: record.version,
    createdAt: record.createdAt,
    createdBy: record.createdBy,
  };
}

export function recordFromProto(message: pb.AgentDefinitionRecord | undefined): AgentDefinitionRecord {
  if (!message?.definition) throw new Error('agent record without a definition');
  return {
    definition: definitionFromProto(message.definition),
    version: message.version,
    createdAt: message.createdAt,
    createdBy: message.createdBy,
  };
}

const SEVERITY_TO_PROTO = {
  Error: pb.ValidationSeverity.VALIDATION_SEVERITY_ERROR,
  Warning: pb.ValidationSeverity.VALIDATION_SEVERITY_WARNING,
} as const;

export function reportToProto(report: ValidationReport): pb.ValidateAgentResponse {
  return {
    valid: report.valid,
    messages: report.messages.map((message) => ({ ...message, severity: SEVERITY_TO_PROTO[message.severity] })),
  };
}

export function reportFromProto(message: pb.ValidateAgentResponse): ValidationReport {
  return {
    valid: message.valid,
    messages: message.messages.map((entry): ValidationMessage => ({
      severity: entry.severity === pb.ValidationSeverity.VALIDATION_SEVERITY_WARNING ? 'Warning' : 'Error',
      code: entry.code,
      message: entry.message,
      path: entry.path,
    })),
  };
}

export const originName = (origin: pb.AgentOrigin): 'Code' | 'Database' =>
  origin === pb.AgentOrigin.AGENT_ORIGIN_CODE ? 'Code' : 'Database';
