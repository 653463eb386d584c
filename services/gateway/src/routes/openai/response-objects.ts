import type { runPb } from '@hangar/contracts';
import { runStatusFromProto } from '@hangar/contracts';
import { classifyError } from '@hangar/platform';
import type { openEventStream } from '../../http/sse.js';
import { epochSeconds, responseUsage, type StartedRun, type UsageCounts } from './openai-runs.js';

/**
 * OpenAI Responses objects and streaming events made from a Hangar run. A response id is the run
 * id in OpenAI's spelling (`resp_` + its 32 hex digits), so a response is found without a table.
 */

const UUID_HEX = /^[0-9a-f]{32}$/;

export const responseIdOf = (runId: string) => `resp_${runId.replaceAll('-', '')}`;
/** The id of a run's answer as an output item (and as a conversation item: one id for one message). */
export const messageIdOf = (runId: string) => `msg_${runId.replaceAll('-', '')}`;

/** The uuid `prefix` + 32 hex digits spell, or undefined. */
function uuidAfter(prefix: string, id: string): string | undefined {
  const hex = id.startsWith(prefix) ? id.slice(prefix.length) : '';
  if (!UUID_HEX.test(hex)) return undefined;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The run id a response id names, or undefined when it is not one. */
export const runIdOfResponse = (responseId: string) => uuidAfter('resp_', responseId);

/** The run whose answer an output item id names, or undefined when it is not one. */
export const runIdOfItem = (itemId: string) => uuidAfter('msg_', itemId);

/** What a response echoes of its request. */
export interface ResponseRequestEcho {
  model: string;
  instructions: string | null;
  previousResponseId: string | null;
  conversationId: string | null;
  store: boolean;
  metadata: Record<string, string>;
  user: string | null;
}

type ResponseStatus = 'in_progress' | 'completed' | 'failed' | 'incomplete' | 'cancelled';

export interface ResponseOutcome {
  status: ResponseStatus;
  text: string | null;
  usage?: UsageCounts;
  error?: { code: string; message: string };
}

/** The status a run's record gives its response. */
export function responseStatusOf(run: runPb.RunRecord, errorType: string | undefined): ResponseStatus {
  switch (runStatusFromProto(run.status)) {
    case 'Completed':
      return 'completed';
    case 'Canceled':
      return 'cancelled';
    case 'Failed':
      return errorType === 'content_blocked' ? 'incomplete' : 'failed';
    default:
      return 'in_progress';
  }
}

const outputText = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] });

const messageItem = (runId: string, text: string, status: 'in_progress' | 'completed') => ({
  type: 'message',
  id: messageIdOf(runId),
  status,
  role: 'assistant',
  content: status === 'completed' ? [outputText(text)] : [],
});

/** `run` gives the ids and the start; the outcome what is known of its end. */
export function responseObject(run: Pick<runPb.RunRecord, 'id' | 'startedAt'>, echo: ResponseRequestEcho, outcome: ResponseOutcome) {
  const output = outcome.text === null ? [] : [messageItem(run.id, outcome.text, 'completed')];
  return {
    id: responseIdOf(run.id),
    object: 'response',
    created_at: epochSeconds(run.startedAt),
    status: outcome.status,
    background: false,
    error: outcome.status === 'failed' ? (outcome.error ?? null) : null,
    incomplete_details: outcome.status === 'incomplete' ? { reason: 'content_filter' } : null,
    instructions: echo.instructions,
    max_output_tokens: null,
    model: echo.model,
    output,
    parallel_tool_calls: false,
    previous_response_id: echo.previousResponseId,
    conversation: echo.conversationId ? { id: echo.conversationId } : null,
    reasoning: { effort: null, summary: null },
    store: echo.store,
    temperature: null,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    truncation: 'disabled',
    usage: outcome.usage ? responseUsage(outcome.usage) : null,
    user: echo.user,
    metadata: echo.metadata,
  };
}

/**
 * The Responses streaming events of a run: created, in_progress, the message item and its text
 * part with each delta, then completed, incomplete (content filter) or failed.
 */
export async function streamResponseEvents(started: StartedRun, echo: ResponseRequestEcho, stream: ReturnType<typeof openEventStream>) {
  let sequence = 0;
  const send = (type: string, fields: Record<string, unknown>) => stream.send(type, { type, sequence_number: sequence++, ...fields });
  const { run } = started;
  const itemId = messageIdOf(run.id);
  const part = { item_id: itemId, output_index: 0, content_index: 0 };
  const pending = responseObject(run, echo, { status: 'in_progress', text: null });
  send('response.created', { response: pending });
  send('response.in_progress', { response: pending });
  send('response.output_item.added', { output_index: 0, item: messageItem(run.id, '', 'in_progress') });
  send('response.content_part.added', { ...part, part: outputText('') });
  let text = '';
  const finish = (final: runPb.RunRecord, outcome: ResponseOutcome) => {
    send('response.output_text.done', { ...part, text, logprobs: [] });
    send('response.content_part.done', { ...part, part: outputText(text) });
    send('response.output_item.done', { output_index: 0, item: messageItem(run.id, text, 'completed') });
    const event =
      outcome.status === 'failed' ? 'response.failed' : outcome.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    send(event, { response: responseObject(final, echo, outcome) });
    // The AI SDK ends a stream with an error only on an `error` event (it reads no response.failed).
    if (outcome.status === 'failed' && outcome.error) sendError(outcome.error.code, outcome.error.message);
  };
  /** Flat for the openai package, nested for the AI SDK. */
  const sendError = (code: string, message: string) =>
    send('error', { code, message, param: null, error: { type: 'server_error', code, message, param: null } });
  try {
    for (let next = await started.updates.next(); !next.done; next = await started.updates.next()) {
      const update = next.value.update;
      if (update?.$case === 'textDelta') {
        text += update.value.text;
        send('response.output_text.delta', { ...part, delta: update.value.text, logprobs: [] });
      } else if (update?.$case === 'finished') {
        // A run an operator canceled arrives finished: it is `cancelled`, as GET tells it afterwards.
        const final = update.value.run ?? run;
        return finish(final, { status: responseStatusOf(final, undefined), text: update.value.outputText, usage: final.usage });
      } else if (update?.$case === 'failed') {
        const final = update.value.run ?? run;
        const status = update.value.errorType === 'content_blocked' ? 'incomplete' : 'failed';
        return finish(final, { status, text, usage: final.usage, error: { code: update.value.errorType, message: update.value.message } });
      }
    }
  } catch (error) {
    if (!started.signal.aborted) sendError(classifyError(error)?.errorType ?? 'internal_error', 'the run stream broke off');
  }
}
