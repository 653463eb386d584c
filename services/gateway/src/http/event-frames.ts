import { z } from 'zod';

/**
 * Schemas of `text/event-stream` frames for the OpenAPI document: a frame is its `event:` name,
 * its `data:` line (JSON) and, on a stream that can be resumed, its `id:`.
 */
export const eventFrame = <E extends string, D extends z.ZodType>(
  schemaId: string,
  event: E,
  data: D,
  description: string,
  options: { id?: z.ZodType } = {},
) => z.object({ event: z.literal(event), ...(options.id && { id: options.id }), data }).meta({ id: schemaId, description });

/** The frame `id:` of a resumable stream: the event's sequence number, sent back as `Last-Event-ID`. */
export const SequenceFrameId = z
  .string()
  .regex(/^[0-9]+$/)
  .describe('The event’s seq; send the last one received as Last-Event-ID to resume after it');
