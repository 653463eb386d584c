import { notFound, validationError, type Caller, type HangarConfig } from '@hangar/platform';
import type { AttachmentWriter, StoredAttachment } from '../clients/ports.js';
import type { ImageGenerator } from './image-generator.js';
import { imageCharge, type ImageCharge } from './image-pricing.js';

const MAX_PROMPT_CHARS = 32_000;
const SIZE = /^(\d{2,5}x\d{2,5}|auto)$/;

export interface GeneratedImageSet {
  images: StoredAttachment[];
  provider: string;
  model: string;
  size: string | null;
  charge: ImageCharge;
}

/**
 * Image generation (API.md "Images and voice"): `Images:Provider`'s `Images:Model` draws up to
 * `Images:MaxImagesPerRequest` images for a prompt; each is stored as an attachment of the
 * caller's tenant (in a session when one is named) and priced per `Pricing:Images`.
 */
export function createImageService(deps: {
  /** Undefined while `Images:Enabled` is false: every request is 404, as if the route were not there. */
  generator: ImageGenerator | undefined;
  attachments: AttachmentWriter;
  settings: Pick<HangarConfig, 'Images' | 'Pricing'>;
}) {
  const { Images, Pricing } = deps.settings;
  return {
    async generate(
      caller: Caller,
      request: { prompt: string; size?: string; count?: number; sessionId?: string },
      signal: AbortSignal,
    ): Promise<GeneratedImageSet> {
      if (!deps.generator) throw notFound('image generation is switched off on this deployment (Images:Enabled false)');
      const count = request.count ?? 1;
      const problems = [
        ...(request.prompt.trim() && request.prompt.length <= MAX_PROMPT_CHARS
          ? []
          : [{ path: 'prompt', message: `must be 1–${MAX_PROMPT_CHARS} characters` }]),
        ...(Number.isInteger(count) && count >= 1 && count <= Images.MaxImagesPerRequest
          ? []
          : [{ path: 'n', message: `must be 1–${Images.MaxImagesPerRequest} (Images:MaxImagesPerRequest)` }]),
        ...(request.size === undefined || SIZE.test(request.size) ? [] : [{ path: 'size', message: 'must be <width>x<height> or auto' }]),
      ];
      if (problems.length) throw validationError('the image request is not valid', problems);
      const generated = await deps.generator({ prompt: request.prompt, count, size: request.size }, signal);
      const images: StoredAttachment[] = [];
      for (const [index, image] of generated.images.entries()) {
        const fileName = `image-${Date.now()}-${index + 1}.png`;
        images.push(await deps.attachments.store(caller, { fileName, bytes: image.bytes, sessionId: request.sessionId }, signal));
      }
      const target = { provider: Images.Provider!, model: Images.Model! };
      return {
        images,
        ...target,
        size: request.size ?? null,
        charge: imageCharge(Pricing, target, { count: images.length, size: request.size, outputTokens: generated.outputTokens }),
      };
    },
  };
}

export type ImageService = ReturnType<typeof createImageService>;
