import { type QuotaThresholdNotice, type runPb } from '@hangar/contracts';
import { classifyError } from '@hangar/platform';
import type { Response } from 'express';
import { runJson } from '../routes/runs/runs.schemas.js';
import { pendingApprovalsJson, type RunNotices } from './run-stream.js';
import { openEventStream } from './sse.js';

/**
 * A started run as the Vercel AI SDK's UI message stream (protocol v1), so `useChat` with its
 * default transport reads a Hangar run: one assistant message whose text, tool calls (dynamic
 * tools: the agent ran them) and Hangar data parts (`data-child-run`, `data-approvals`,
 * `data-quota-threshold`) arrive as chunks, ending with `finish` (run id, usage and cost as
 * message metadata) or `error`, then `[DONE]`.
 */

export const UI_MESSAGE_STREAM_PROTOCOL = 'ui-message-stream';

type RunUpdates = AsyncIterator<runPb.StartRunResponse>;

export async function streamUIMessages(
  response: Response,
  run: runPb.RunRecord,
  updates: RunUpdates,
  signal: AbortSignal,
  notices?: RunNotices,
) {
  const stream = openEventStream(response, { 'x-vercel-ai-ui-message-stream': 'v1' });
  const textId = `text-${run.id}`;
  let textOpen = false;
  const closeText = () => {
    if (textOpen) stream.data({ type: 'text-end', id: textId });
    textOpen = false;
  };
  stream.data({
    type: 'start',
    messageId: run.id,
    messageMetadata: { runId: run.id, sessionId: run.sessionId ?? null, agentName: run.agentName },
  });
  stream.data({ type: 'start-step' });
  let ended = false;
  // Subscribed beside the run's first updates, not before them (a notice is a hint).
  const listening = notices?.(run.rootRunId, (notice: QuotaThresholdNotice) => {
    if (!ended) stream.data({ type: 'data-quota-threshold', data: notice, transient: true });
  }).catch(() => undefined);
  try {
    for (let next = await updates.next(); !next.done; next = await updates.next()) {
      const update = next.value.update;
      switch (update?.$case) {
        case 'textDelta':
          if (!textOpen) stream.data({ type: 'text-start', id: textId });
          textOpen = true;
          stream.data({ type: 'text-delta', id: textId, delta: update.value.text });
          break;
        case 'toolCall':
          closeText();
          stream.data({
            type: 'tool-input-available',
            toolCallId: update.value.toolCallId,
            toolName: update.value.toolName,
            input: update.value.args ?? null,
            dynamic: true,
          });
          break;
        case 'toolResult':
          stream.data({
            type: 'tool-output-available',
            toolCallId: update.value.toolCallId,
            output: update.value.result ?? null,
            dynamic: true,
          });
          break;
        case 'childRun':
          stream.data({
            type: 'data-child-run',
            id: update.value.runId,
            data: { runId: update.value.runId, agentName: update.value.agentName },
          });
          break;
        case 'approvals':
          stream.data({
            type: 'data-approvals',
            data: {
              runId: run.id,
              approvals: pendingApprovalsJson(update.value.approvals),
            },
          });
          break;
        case 'finished': {
          closeText();
          const finished = runJson(update.value.run);
          stream.data({ type: 'finish-step' });
          stream.data({
            type: 'finish',
            finishReason: 'stop',
            messageMetadata: { runId: finished.id, status: finished.status, usage: finished.usage, cost: finished.cost },
          });
          stream.data('[DONE]');
          break;
        }
        case 'failed':
          closeText();
          stream.data({ type: 'error', errorText: `${update.value.errorType}: ${update.value.message}` });
          stream.data('[DONE]');
          break;
      }
    }
  } catch (error) {
    if (!signal.aborted) {
      stream.data({ type: 'error', errorText: `${classifyError(error)?.errorType ?? 'internal_error'}: the run stream broke off` });
      stream.data('[DONE]');
    }
  } finally {
    ended = true;
    await (await listening)?.unsubscribe();
  }
  stream.end();
}
