import type { imagePb as pb } from '@hangar/contracts';
import type { CallerContext } from '@hangar/platform';
import type { ImageService } from './image.service.js';

/** gRPC ↔ image generation; translation only. */
export function imageGrpc(images: ImageService): pb.ImageServiceImplementation<CallerContext> {
  return {
    async generateImages(request, { caller, signal }) {
      const generated = await images.generateOnRequest(
        caller,
        { prompt: request.prompt, size: request.size, count: request.n, sessionId: request.sessionId },
        signal,
      );
      return {
        images: generated.images.map((image) => ({ ...image, sessionId: image.sessionId ?? undefined })),
        provider: generated.provider,
        model: generated.model,
        size: generated.size ?? undefined,
        quantity: generated.charge.quantity,
        cost: generated.charge.cost ?? undefined,
        currency: generated.charge.currency,
      };
    },
  };
}
