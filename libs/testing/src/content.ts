import { randomBytes } from 'node:crypto';
import { createContentCipher, PROTECTED_COLUMNS } from '@hangar/platform';

/** A cipher that seals every protected column under a fresh key `k1`, for repository tests. */
export const sealingCipher = () =>
  createContentCipher({ activeKeyId: 'k1', keys: new Map([['k1', randomBytes(32)]]), columns: new Set(PROTECTED_COLUMNS) });
