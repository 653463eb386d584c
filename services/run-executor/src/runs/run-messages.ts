import type { ModelMessage } from 'ai';
import type { AttachmentContent } from '../clients/ports.js';
import { promptOf, type PreparedRun } from './prepare.js';
import type { StartRunRequest } from './run.model.js';

/** The model's conversation: the session's history, then the request, its last user message carrying the attachments. */
export function modelMessages(history: PreparedRun['history'], request: StartRunRequest, attachments: AttachmentContent[]): ModelMessage[] {
  const lastUser = request.messages.map((message) => message.role).lastIndexOf('user');
  return [
    ...(promptOf(history, []) as ModelMessage[]),
    ...request.messages.map((message, index) =>
      index === lastUser && attachments.length
        ? ({ role: 'user', content: [{ type: 'text', text: message.content }, ...attachments.map(filePart)] } as ModelMessage)
        : ({ role: message.role, content: message.content } as ModelMessage),
    ),
  ];
}

/** What a completed run adds to its session: the request's messages and the answer. */
export function sessionTurn(request: StartRunRequest, attachments: AttachmentContent[], answer: string, runId: string) {
  const lastUser = request.messages.map((message) => message.role).lastIndexOf('user');
  return [
    ...request.messages.map((message, index) => ({
      role: message.role,
      // The turn keeps references to its attachments; they stop resolving once an attachment is deleted.
      content:
        index === lastUser && attachments.length
          ? [{ type: 'text', text: message.content }, ...attachments.map(attachmentReference)]
          : message.content,
      runId,
    })),
    { role: 'assistant', content: answer, runId },
  ];
}

/** Images as image parts, text inline, everything else (PDF, audio) as file parts. */
function filePart(attachment: AttachmentContent) {
  if (attachment.mediaType.startsWith('image/'))
    return { type: 'image' as const, image: attachment.bytes, mediaType: attachment.mediaType };
  if (attachment.mediaType === 'text/plain') {
    return { type: 'text' as const, text: `Attachment ${attachment.fileName}:\n${Buffer.from(attachment.bytes).toString('utf8')}` };
  }
  return { type: 'file' as const, data: attachment.bytes, mediaType: attachment.mediaType, filename: attachment.fileName };
}

const attachmentReference = (attachment: AttachmentContent) => ({
  type: 'attachment',
  attachmentId: attachment.id,
  fileName: attachment.fileName,
  mediaType: attachment.mediaType,
});
