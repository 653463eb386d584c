import { z } from 'zod';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';
import { descriptorJson, DescriptorSchema } from './attachments.routes.js';

const GeneratedImagesSchema = z
  .object({
    images: z.array(DescriptorSchema).describe('Each image, stored as an attachment (its bytes at GET /api/attachments/{id})'),
    provider: z.string(),
    model: z.string(),
    size: z.string().nullable().describe('The size asked for; null: the provider’s default'),
    quantity: z.number().int().describe('Images generated: what is priced'),
    cost: z.number().nullable().describe('Per Pricing:Images; null when no price applies'),
    currency: z.string(),
  })
  .meta({ id: 'GeneratedImages' });

/** API.md "Images and voice": image generation, live only while Images:Enabled. */
export const imageRoutes = [
  defineRoute({
    method: 'post',
    path: '/api/images/generate',
    operationId: 'generateImages',
    summary: 'Generate images',
    description:
      'Draws `n` images (default 1, at most Images:MaxImagesPerRequest) for a prompt with Images:Provider’s Images:Model, stores each as an attachment (in `sessionId` when given) and answers their descriptors with the cost per Pricing:Images, which counts toward the tenant’s Cost quota rules for every agent. 404 while Images:Enabled is false; 429 while such a rule is used up; 503 when the image provider fails.',
    tag: 'Images',
    auth: { role: 'Operator', scope: 'RunsWrite' },
    // It stores attachments: the host's rule for uploads applies.
    runAuthorization: { operation: 'attachments.upload', denial: 'forbid' },
    body: z
      .strictObject({
        prompt: z.string().min(1).max(32_000),
        size: z.string().max(16).optional().describe('The provider’s own size string, e.g. 1024x1024 (SizeMultipliers match it exactly)'),
        n: z.number().int().min(1).max(1000).optional().describe('At most Images:MaxImagesPerRequest'),
        sessionId: z.string().max(128).optional(),
      })
      .meta({ id: 'GenerateImagesRequest' }),
    responses: {
      200: { description: 'The images, stored', schema: GeneratedImagesSchema },
      400: problemResponse('No prompt, a bad size, more images than Images:MaxImagesPerRequest, or a request the provider refused'),
      403: problemResponse('The host’s run authorization refused the upload'),
      404: problemResponse('Image generation is off (Images:Enabled false)'),
      429: problemResponse(
        'A Cost quota rule for every agent of the tenant is used up (`quota`, `limit`, `used`, `resetsAt`, Retry-After), or over the rate limit (rate_limited)',
      ),
      503: problemResponse('The image provider failed'),
    },
    async handler({ body, caller, signal }, { images }) {
      const generated = await images.generateImages(
        { prompt: body.prompt, size: body.size, n: body.n, sessionId: body.sessionId },
        { caller, signal },
      );
      return {
        status: 200,
        body: {
          images: generated.images.map(descriptorJson),
          provider: generated.provider,
          model: generated.model,
          size: generated.size ?? null,
          quantity: generated.quantity,
          cost: generated.cost ?? null,
          currency: generated.currency,
        },
      };
    },
  }),
];
