import type { attachmentPb } from '@hangar/contracts';
import { HangarError } from '@hangar/platform';
import { z } from 'zod';
import { FILE_PART_BODY, locationHeader, pageNumber, problemResponse } from '../api.schemas.js';
import { receiveFilePart } from '../http/multipart.js';
import { writePiece } from '../http/streamed-body.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Attachments';

export const DescriptorSchema = z
  .object({
    id: z.uuid(),
    fileName: z.string(),
    mediaType: z.string().describe('Decided by the file signature, never by the declared Content-Type'),
    size: z.number().int(),
    sha256: z.string(),
    sessionId: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'AttachmentDescriptor' });

const AttachmentParams = z.object({ id: z.string().describe('Attachment id (uuid)') });

export const descriptorJson = (attachment: attachmentPb.AttachmentDescriptor | undefined) => ({
  id: attachment!.id,
  fileName: attachment!.fileName,
  mediaType: attachment!.mediaType,
  size: attachment!.size,
  sha256: attachment!.sha256,
  sessionId: attachment!.sessionId ?? null,
  createdAt: attachment!.createdAt,
});

/** `attachment; filename="..."; filename*=UTF-8''...` with the name made header-safe. */
function contentDisposition(fileName: string) {
  const ascii = fileName.replace(/[^\x20-\x7E]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(fileName)}`;
}

export const attachmentRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/attachments',
    operationId: 'uploadAttachment',
    summary: 'Upload an attachment',
    description:
      'Stores a file sent as multipart/form-data (part `file`), optionally bound to a session; its media type is decided by its signature, not by the name or the declared type. Over Attachments:MaxBytes is 413; a type that is not allowed, or does not match its signature, is 415.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    query: z.object({ sessionId: z.string().optional() }),
    documentedBody: FILE_PART_BODY,
    runAuthorization: { operation: 'attachments.upload', denial: 'forbid' },
    responses: {
      201: {
        description: 'The stored attachment',
        schema: DescriptorSchema,
        headers: { Location: locationHeader('The new attachment, {prefix}/api/attachments/{id}') },
      },
      413: problemResponse('Larger than Attachments:MaxBytes'),
      415: problemResponse('Not multipart/form-data, or a file whose signature is not an allowed media type'),
    },
    async handler({ query, caller, request }, { attachments, config }) {
      if (!request.is('multipart/form-data')) {
        throw new HangarError('unsupportedMediaType', 'upload with Content-Type multipart/form-data and a `file` part');
      }
      const attachment = await receiveFilePart(request, async (fileName, bytes, signal) => {
        async function* parts(): AsyncIterable<attachmentPb.UploadAttachmentRequest> {
          yield { part: { $case: 'header', value: { fileName, sessionId: query.sessionId } } };
          for await (const chunk of bytes) yield { part: { $case: 'chunk', value: chunk as Buffer } };
        }
        return (await attachments.uploadAttachment(parts(), { caller, signal })).attachment;
      });
      return {
        status: 201,
        body: descriptorJson(attachment),
        headers: { Location: `${config.Hangar.Api.Prefix}/api/attachments/${attachment!.id}` },
      };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/attachments',
    operationId: 'listAttachments',
    summary: 'List attachments',
    description:
      'Returns attachment descriptors (never the bytes), newest first, with take clamped to 1..200. Without sessionId the list also includes attachments of no session.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    query: z.object({ sessionId: z.string().optional(), skip: pageNumber(0), take: pageNumber(50) }),
    runAuthorization: { operation: 'attachments.list', denial: 'forbid' },
    responses: { 200: { description: 'Descriptors (never the bytes)', schema: DescriptorSchema.array() } },
    async handler({ query, caller }, { attachments }) {
      const { attachments: found } = await attachments.listAttachments(
        { sessionId: query.sessionId, skip: query.skip, take: query.take },
        { caller },
      );
      return { status: 200, body: found.map(descriptorJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/attachments/{id}',
    operationId: 'downloadAttachment',
    summary: 'Download an attachment',
    description:
      'Returns the file’s bytes with its stored media type, ETag (the SHA-256), Content-Disposition attachment and nosniff. If-None-Match with the ETag answers 304.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'RunsRead' },
    params: AttachmentParams,
    runAuthorization: { operation: 'attachments.read', denial: 'hide', resourceId: (params) => params.id },
    responses: {
      200: { description: 'The file', contentType: 'application/octet-stream', schema: z.string() },
      304: { description: 'If-None-Match matched the ETag' },
      404: problemResponse('Unknown or denied attachment'),
    },
    async handler({ params, caller, request, response }, { attachments }) {
      const abort = new AbortController();
      response.once('close', () => abort.abort());
      const parts = attachments.downloadAttachment({ id: params.id }, { caller, signal: abort.signal })[Symbol.asyncIterator]();
      const first = await parts.next();
      if (first.done || first.value.part?.$case !== 'descriptor')
        throw new HangarError('unavailable', 'the attachment service sent no descriptor');
      const descriptor = first.value.part.value;
      const etag = `"${descriptor.sha256}"`;
      response.set({
        'Content-Type': descriptor.mediaType,
        'Content-Length': String(descriptor.size),
        ETag: etag,
        'Content-Disposition': contentDisposition(descriptor.fileName),
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'private, no-cache',
      });
      if (
        request
          .get('if-none-match')
          ?.split(',')
          .map((tag) => tag.trim())
          .includes(etag)
      ) {
        abort.abort();
        response.removeHeader('Content-Length');
        response.status(304).end();
        return { status: 304, sent: true };
      }
      response.status(200);
      try {
        for (let next = await parts.next(); !next.done; next = await parts.next()) {
          if (next.value.part?.$case !== 'chunk') continue;
          if (!(await writePiece(response, next.value.part.value))) break;
        }
        response.end();
      } catch (error) {
        // Headers are out: the only honest signal left is a cut connection.
        response.destroy(error as Error);
      }
      return { status: 200, sent: true };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/attachments/{id}',
    operationId: 'deleteAttachment',
    summary: 'Delete an attachment',
    description: 'Deletes an attachment; its bytes are removed at once. An unknown or denied attachment is 404.',
    tag: TAG,
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: AttachmentParams,
    runAuthorization: { operation: 'attachments.delete', denial: 'hide', resourceId: (params) => params.id },
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('Unknown or denied attachment') },
    async handler({ params, caller }, { attachments }) {
      await attachments.deleteAttachment({ id: params.id }, { caller });
      return { status: 204 };
    },
  }),
];
