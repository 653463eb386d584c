import { Ajv, type ValidateFunction } from 'ajv';
import type { AgentDefinition } from '@hangar/contracts';

const ajv = new Ajv({ allErrors: true, strict: false });
const compiledSchemas = new Map<string, ValidateFunction>();

/**
 * With `StructuredResponse:Enabled`, a `Json` agent must answer with JSON and a `JsonSchema` agent
 * with JSON its schema accepts; the check returns what is wrong, or undefined. A single code fence
 * around the JSON is tolerated.
 */
export function structuredResponseCheck(definition: AgentDefinition): ((text: string) => string | undefined) | undefined {
  const format = definition.responseFormat;
  if (format.kind === 'Text') return undefined;
  return (text) => {
    const body = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text)?.[1] ?? text;
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return 'it is not JSON';
    }
    if (format.kind !== 'JsonSchema') return undefined;
    const key = JSON.stringify(format.schema ?? {});
    let validate = compiledSchemas.get(key);
    if (!validate) {
      try {
        compiledSchemas.set(key, (validate = ajv.compile(format.schema ?? {})));
      } catch (error) {
        return `the agent's JSON Schema cannot be compiled (${(error as Error).message})`;
      }
    }
    return validate(value) ? undefined : `it does not match the schema: ${ajv.errorsText(validate.errors)}`;
  };
}

export const structuredResponseHint = (definition: AgentDefinition) =>
  definition.responseFormat.kind === 'JsonSchema'
    ? `Reply with JSON only, matching this JSON Schema: ${JSON.stringify(definition.responseFormat.schema)}`
    : 'Reply with JSON only.';
