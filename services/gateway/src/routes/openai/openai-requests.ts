import { validationError } from '@hangar/platform';
import { z } from 'zod';

/**
 * What the OpenAI-compatible routes take from a request. An agent owns its model, tools and
 * settings, so a request can only bring the conversation: fields that would change what the agent
 * is (tools, output format) are refused, sampling settings are not applied and are named in the
 * `X-Hangar-Ignored-Parameters` answer header, and a field OpenAI does not know is refused as
 * OpenAI refuses it (docs/decisions.md "OpenAI-compatible surface").
 */

/** A conversation turn as the run executor takes it. */
export interface TurnMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface RequestFields {
  /** Fields the route reads. */
  handled: readonly string[];
  /** OpenAI fields the agent's own definition decides; accepted, not applied, reported. */
  ignored: readonly string[];
  /** OpenAI fields that would change the agent itself: 400. */
  refused: Readonly<Record<string, string>>;
}

/** The names of ignored fields present in `body`; throws on a refused or an unknown one. */
export function checkRequestFields(body: Record<string, unknown>, fields: RequestFields): string[] {
  const ignored: string[] = [];
  for (const [name, value] of Object.entries(body)) {
    if (value === undefined || value === null) continue;
    if (fields.handled.includes(name)) continue;
    if (fields.ignored.includes(name)) ignored.push(name);
    else if (name in fields.refused)
      throw validationError(`${name} is not supported here: ${fields.refused[name]}`, [{ path: name, message: fields.refused[name]! }]);
    else throw validationError(`Unrecognized request argument supplied: ${name}`, [{ path: name, message: 'is not a known argument' }]);
  }
  return ignored;
}

/** Sampling and serving settings both OpenAI routes accept and leave to the agent's definition. */
export const AGENT_SETTINGS = [
  'temperature',
  'top_p',
  'top_logprobs',
  'service_tier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'reasoning',
  'reasoning_effort',
  'verbosity',
] as const;

export const METADATA = z
  .record(z.string().max(64), z.string().max(512))
  .refine((metadata) => Object.keys(metadata).length <= 16, 'at most 16 pairs')
  .optional();

const TextPart = z.object({ type: z.enum(['text', 'input_text', 'output_text']), text: z.string() }).loose();
const Content = z.union([z.string(), z.array(z.object({ type: z.string() }).loose())]);

/** The text of a message's content: a string, or text parts joined; any other part is refused. */
function textOf(content: z.infer<typeof Content>, path: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((part, index) => {
      const text = TextPart.safeParse(part);
      if (!text.success)
        throw validationError(`content part type "${part.type}" is not supported`, [
          {
            path: `${path}[${index}].type`,
            message: 'only text parts are supported; give files to a run as attachments through /api',
          },
        ]);
      return text.data.text;
    })
    .join('');
}

const ROLES: Record<string, TurnMessage['role']> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };

const ChatMessage = z.object({ role: z.string(), content: Content.nullish() }).loose();

/** Chat Completions `messages` as turns; tool turns are refused (the agent runs its own tools). */
export function turnsOfChatMessages(messages: unknown): TurnMessage[] {
  const parsed = z.array(ChatMessage).min(1).max(500).safeParse(messages);
  if (!parsed.success)
    throw validationError('messages must be a non-empty array of messages', [{ path: 'messages', message: 'is not valid' }]);
  return parsed.data.map((message, index) => {
    const role = ROLES[message.role];
    if (!role || message.tool_calls || message.function_call)
      throw validationError(`messages[${index}] is a ${message.role} turn, which is not supported`, [
        {
          path: `messages[${index}].role`,
          message: 'must be system, developer, user or assistant without tool calls: the agent runs its own tools',
        },
      ]);
    return { role, content: textOf(message.content ?? '', `messages[${index}].content`) };
  });
}

const InputItem = z.object({ type: z.string().optional(), role: z.string().optional(), content: Content.optional() }).loose();

/** A turn of Responses input, or a reference to an earlier answer (`item_reference`), resolved by the route. */
export type InputTurn = TurnMessage | { reference: string };

/** Responses `input` (a string, message items, item references) as turns; other items are refused. */
export function turnsOfResponseInput(input: unknown): InputTurn[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const parsed = z.array(InputItem).min(1).max(500).safeParse(input);
  if (!parsed.success)
    throw validationError('input must be a string or a non-empty array of items', [{ path: 'input', message: 'is not valid' }]);
  return parsed.data.map((item, index): InputTurn => {
    if (item.type === 'item_reference' && typeof item.id === 'string') return { reference: item.id };
    const role = item.role ? ROLES[item.role] : undefined;
    if ((item.type !== undefined && item.type !== 'message') || !role || item.content === undefined)
      throw validationError(`input[${index}] (${item.type ?? item.role ?? 'untyped'}) is not supported`, [
        { path: `input[${index}]`, message: 'only message items with text content are supported: the agent runs its own tools' },
      ]);
    return { role, content: textOf(item.content, `input[${index}].content`) };
  });
}
