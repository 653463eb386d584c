import { fileTypeFromBuffer } from 'file-type';
import { HangarError, notFound, validationError, type AuditWriter, type Caller, type HangarConfig } from '@hangar/platform';
import type { AttachmentWriter, StoredAttachment } from '../clients/ports.js';
import type { SpendQuota } from '../spend/spend-quota.js';
import type { ImageGenerator } from './image-generator.js';
import { imageCharge, type ImageCharge } from './image-pricing.js';

const MAX_PROMPT_CHARS = 32_000;

const SIZE = /^(\d{2,5}x\d{2,5}|auto)$/;

export type ImageRequest = { prompt: string; size?: string; count?: number; sessionId?: string };

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
  /** Records each generation (quantity, cost) in the audit trail; never throws (auditOrLog). */
  audit: AuditWriter;
  /** Admits and counts a generation asked for on its own (not an agent's, whose run carries its cost). */
  spend: Pick<SpendQuota, 'admit' | 'count'>;
  settings: Pick<HangarConfig, 'Images' | 'Pricing'>;
}) {
  const { Images, Pricing } = deps.settings;

  function check(request: ImageRequest) {
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
    return { generator: deps.generator, count };
  }

  async function draw(
    caller: Caller,
    request: ImageRequest,
    { generator, count }: ReturnType<typeof check>,
    signal: AbortSignal,
    spentOnItsOwn: boolean,
  ): Promise<GeneratedImageSet> {
    const generated = await generator({ prompt: request.prompt, count, size: request.size }, signal);
    const target = { provider: Images.Provider!, model: Images.Model! };
    const charge = imageCharge(Pricing, target, {
      count: generated.images.length,
      size: request.size,
      outputTokens: generated.outputTokens,
    });
    // Drawn is paid for: the generation is recorded before anything else can fail.
    await deps.audit(caller, {
      action: 'image.generated',
      resourceType: 'image',
      resourceId: target.model,
      details: { provider: target.provider, size: request.size ?? null, ...charge },
    });
    // Counted with the audit entry, before anything else can fail.
    if (spentOnItsOwn) await deps.spend.count(caller, charge.cost);
    // Named by what they are; bytes that are no image are the provider's failure, stored nowhere.
    // The signature library the attachment service decides types with.
    const detected = await Promise.all(generated.images.map((bytes) => fileTypeFromBuffer(bytes)));
    const extensions = detected.map((type) => (type?.mime.startsWith('image/') ? type.ext : undefined));
    if (extensions.includes(undefined))
      throw new HangarError('unavailable', 'the image provider answered bytes that are no image', {}, 'provider_error');
    const images: StoredAttachment[] = [];
    try {
      for (const [index, bytes] of generated.images.entries()) {
        const fileName = `image-${Date.now()}-${index + 1}.${extensions[index]}`;
        images.push(await deps.attachments.store(caller, { fileName, bytes, sessionId: request.sessionId }, signal));
      }
    } catch (error) {
      // All or none: what was stored of this generation goes again.
      await Promise.all(images.map((image) => deps.attachments.remove(caller, image.id).catch(() => undefined)));
      // An image the attachment rules refuse (too large, a type not allowed) is the provider's answer failing, not the caller's request.
      if (error instanceof HangarError && (error.status === 413 || error.status === 415))
        throw new HangarError('unavailable', `the image provider's image could not be stored: ${error.message}`, {}, 'provider_error');
      throw error;
    }
    return { images, ...target, size: request.size ?? null, charge };
  }

  return {
    /** An agent's drawing (its image tool): the charge goes to its run. */
    generate: (caller: Caller, request: ImageRequest, signal: AbortSignal) => draw(caller, request, check(request), signal, false),

    /** A generation asked for on its own (`POST /api/images/generate`): admitted and counted by the tenant's quotas. */
    async generateOnRequest(caller: Caller, request: ImageRequest, signal: AbortSignal): Promise<GeneratedImageSet> {
      const checked = check(request);
      await deps.spend.admit(caller);
      return draw(caller, request, checked, signal, true);
    },
  };
}

export type ImageService = ReturnType<typeof createImageService>;
