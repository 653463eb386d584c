import { randomUUID } from 'node:crypto';
import type { RunOperation, runPb, sessionPb } from '@hangar/contracts';
import { classifyError, HangarError, type Caller } from '@hangar/platform';
import type { GatewayContext } from '../../gateway.context.js';
import type { InputTurn, TurnMessage } from './openai-requests.js';
import { runIdOfItem, runIdOfResponse } from './response-objects.js';

/**
 * Where a Responses turn runs and what it reads: a stored response lives in a session (a new one,
 * the conversation's, or the previous response's — branched when that is not its latest turn); a
 * `store: false` turn reads the same history but writes no session. Another tenant's or user's
 * record is the same 404 as an unknown one.
 */

export const responseNotFound = (id: string, param?: string) =>
  new HangarError('notFound', `Response with id '${id}' not found.`, param ? { errors: [{ path: param, message: 'not found' }] } : {});

const conversationNotFound = (id: string) =>
  new HangarError('notFound', `Conversation with id '${id}' not found.`, { errors: [{ path: 'conversation', message: 'not found' }] });

export const notFoundAsUndefined = (error: unknown) => {
  if (classifyError(error)?.status === 404) return undefined;
  throw error;
};

/** Whether the run-authorization handler lets the caller do `operation` on the record (a denial looks like an unknown record). */
const allowed = async (context: GatewayContext, caller: Caller, operation: RunOperation, resourceId: string) =>
  !context.authorizeRun || (await context.authorizeRun({ operation, ...caller, resourceId }));

/** A run of the caller's tenant the caller may read, or undefined. */
export async function readableRun(context: GatewayContext, caller: Caller, runId: string): Promise<runPb.RunRecord | undefined> {
  if (!(await allowed(context, caller, 'runs.read', runId))) return undefined;
  return context.runs.getRun({ runId }, { caller }).then(({ run }) => run, notFoundAsUndefined);
}

/** A session the caller may read (ownership and the run-authorization handler both apply), with its messages. */
export async function readableSession(context: GatewayContext, caller: Caller, sessionId: string) {
  if (!(await allowed(context, caller, 'sessions.read', sessionId))) return undefined;
  return context.sessions.getSession({ sessionId }, { caller }).then((found) => found, notFoundAsUndefined);
}

/** The text of a stored message: a string, or its text parts (attachment references are not text). */
export function storedMessageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (part && typeof part === 'object' && part.type === 'text' ? String(part.text) : '')).join('');
}

const turnsOf = (messages: sessionPb.SessionMessage[]): TurnMessage[] =>
  messages
    .filter((message) => message.role === 'user' || message.role === 'assistant' || message.role === 'system')
    .map((message) => ({ role: message.role as TurnMessage['role'], content: storedMessageText(message.content) }));

export interface TurnPlace {
  /** The session the turn is appended to; none for `store: false`. */
  sessionId?: string;
  /** The history a `store: false` continuation reads, sent as turns before its own. */
  history: TurnMessage[];
}

export async function placeOfTurn(
  request: { conversationId?: string; previousResponseId?: string; store: boolean },
  caller: Caller,
  context: GatewayContext,
): Promise<TurnPlace> {
  if (request.conversationId !== undefined) {
    const found = await readableSession(context, caller, request.conversationId);
    if (!found) throw conversationNotFound(request.conversationId);
    return request.store ? { sessionId: request.conversationId, history: [] } : { history: turnsOf(found.messages) };
  }
  if (request.previousResponseId !== undefined) {
    const previousId = request.previousResponseId;
    const runId = runIdOfResponse(previousId);
    const run = runId ? await readableRun(context, caller, runId) : undefined;
    const found = run?.sessionId ? await readableSession(context, caller, run.sessionId) : undefined;
    const answer = found ? found.messages.findLastIndex((message) => message.runId === runId) : -1;
    if (!found || answer < 0) throw responseNotFound(previousId, 'previous_response_id');
    if (!request.store) return { history: turnsOf(found.messages.slice(0, answer + 1)) };
    if (answer === found.messages.length - 1) return { sessionId: run!.sessionId, history: [] };
    if (!(await allowed(context, caller, 'sessions.branch', run!.sessionId!))) throw responseNotFound(previousId, 'previous_response_id');
    const branched = await context.sessions.branchSession(
      { sessionId: run!.sessionId!, upToSequence: found.messages[answer]!.sequence },
      { caller },
    );
    return { sessionId: branched.sessionId, history: [] };
  }
  return request.store ? { sessionId: randomUUID(), history: [] } : { history: [] };
}

/** The answer of a response's run: its assistant message in its session, else its `message.completed` event. */
export async function answerOfRun(context: GatewayContext, caller: Caller, run: runPb.RunRecord): Promise<string> {
  const found = run.sessionId ? await readableSession(context, caller, run.sessionId) : undefined;
  const stored = found?.messages.findLast((message) => message.runId === run.id && message.role === 'assistant');
  if (stored) return storedMessageText(stored.content);
  let text = '';
  for await (const event of context.runs.streamRunEvents({ runId: run.id, afterSeq: 0 }, { caller })) {
    if (event.type !== 'message.completed') continue;
    // A long answer is recorded as { truncated, length, preview } (RunRecording:MaxPayloadLength).
    const recorded = event.data?.text as unknown;
    text = typeof recorded === 'string' ? recorded : String((recorded as { preview?: unknown } | undefined)?.preview ?? '');
  }
  return text;
}

/** The input's turns, an `item_reference` to an earlier answer read from its run (the AI SDK sends those for stored responses). */
export async function resolveReferences(input: InputTurn[], caller: Caller, context: GatewayContext): Promise<TurnMessage[]> {
  return Promise.all(
    input.map(async (turn, index) => {
      if (!('reference' in turn)) return turn;
      const runId = runIdOfItem(turn.reference);
      const run = runId ? await readableRun(context, caller, runId) : undefined;
      if (!run)
        throw new HangarError('notFound', `Item with id '${turn.reference}' not found.`, {
          errors: [{ path: `input[${index}].id`, message: 'not found' }],
        });
      return { role: 'assistant' as const, content: await answerOfRun(context, caller, run) };
    }),
  );
}
