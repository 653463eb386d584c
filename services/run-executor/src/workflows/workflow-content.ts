import type { ContentCipher } from '@hangar/platform';
import { jsonb } from '@hangar/storage';

/** A workflow run's states, outputs, checkpoints and answers are sealed as run event data (content protection). */
export const workflowContent = (cipher: ContentCipher) => ({
  seal: (tenantId: string, value: unknown) => jsonb(cipher.sealJson(tenantId, 'RunEventData', value)),
  open: (tenantId: string, stored: unknown) => cipher.openJson(tenantId, 'RunEventData', stored),
});
