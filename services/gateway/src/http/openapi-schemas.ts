import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/** Converts a zod schema to JSON Schema for the document, collecting named schemas as components. */
export type SchemaConverter = (schema: z.ZodType, io: 'input' | 'output') => JsonSchema;

/**
 * Zod puts schemas that carry an id under `$defs` with `#/$defs/...` refs; in an OpenAPI document
 * they belong under `components.schemas`, so they are hoisted there and the refs rewritten.
 */
export function createSchemaConverter(components: Record<string, JsonSchema>): SchemaConverter {
  const rewriteRefs = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewriteRefs);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' ? value.replace('#/$defs/', '#/components/schemas/') : rewriteRefs(value),
      ]),
    );
  };
  return (schema, io) => {
    const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = generated as JsonSchema & { $defs?: Record<string, JsonSchema> };
    for (const [id, definition] of Object.entries($defs ?? {})) {
      // Input and output shapes of one schema differ (defaults); keep both under distinct names.
      const name =
        io === 'input' && components[id] && JSON.stringify(components[id]) !== JSON.stringify(rewriteRefs(definition)) ? `${id}Input` : id;
      components[name] = rewriteRefs(definition) as JsonSchema;
    }
    return rewriteRefs(rest) as JsonSchema;
  };
}

/** Path, query or header parameters from a zod object schema. */
export function parametersOf(toSchema: SchemaConverter, schema: z.ZodType | undefined, location: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const json = toSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (json.required ?? []).includes(name),
    description: property.description,
    schema: property,
  }));
}
