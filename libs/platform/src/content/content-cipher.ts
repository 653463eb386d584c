import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { HangarError } from '../errors.js';

/** API.md "Content protection": the ten protected columns, by the names `ContentProtection:Columns` lists. */
export const PROTECTED_COLUMNS = [
  'RunInputs',
  'RunEventData',
  'RunScoreComments',
  'SessionMessages',
  'SessionState',
  'ApprovalArguments',
  'ToolPayloads',
  'IdempotencyResponses',
  'WebhookPayloads',
  'AttachmentFileNames',
] as const;

export type ProtectedColumn = (typeof PROTECTED_COLUMNS)[number];

const PREFIX = 'hgc1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** How a sealed value sits in a jsonb column: an object no stored document has, so plain values are never mistaken for it. */
const JSON_MARKER = '$hgc1';

export interface ContentCipherOptions {
  /** The key new writes use; undefined while protection is off. */
  activeKeyId?: string;
  /** Every key id still readable, with its 32 bytes. */
  keys: ReadonlyMap<string, Buffer>;
  /** The columns protected (all ten when protection is on and none is named). */
  columns: ReadonlySet<ProtectedColumn>;
}

/**
 * AES-256-GCM per value: `hgc1.<keyId>.<base64url nonce>.<base64url ciphertext+tag>`, the tenant and
 * the column bound as associated data (a value moved to another tenant's row or another column does
 * not open). Values written before protection was on (plain) are read as they are.
 */
export function createContentCipher(options: ContentCipherOptions) {
  const { activeKeyId, keys, columns } = options;
  for (const [id, key] of keys) {
    if (key.length !== 32) throw new Error(`content key "${id}" must be 32 bytes (base64 of 32 random bytes); it has ${key.length}`);
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`content key id "${id}" may hold only letters, digits, "_" and "-"`);
  }
  if (activeKeyId !== undefined && !keys.has(activeKeyId)) throw new Error(`the active content key "${activeKeyId}" is not configured`);
  const associated = (tenantId: string, column: ProtectedColumn) => Buffer.from(`${tenantId}\u0000${column}`);
  const protects = (column: ProtectedColumn) => activeKeyId !== undefined && columns.has(column);

  function seal(tenantId: string, column: ProtectedColumn, text: string): string {
    if (!protects(column)) return text;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keys.get(activeKeyId!)!, nonce);
    cipher.setAAD(associated(tenantId, column));
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}.${activeKeyId}.${nonce.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  function open(tenantId: string, column: ProtectedColumn, stored: string): string {
    if (!isSealed(stored)) return stored;
    const [, keyId, nonce, sealed] = stored.split('.');
    const key = keys.get(keyId);
    if (!key)
      throw new HangarError(
        'unavailable',
        `content sealed with key "${keyId}" cannot be read: that key is not configured (ContentProtection:Keys)`,
        {},
        'content_key_missing',
      );
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'));
    decipher.setAAD(associated(tenantId, column));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new HangarError(
        'unavailable',
        `content sealed with key "${keyId}" does not open for this tenant and column`,
        {},
        'content_unreadable',
      );
    }
  }

  return {
    /** The key new values are sealed with; undefined while protection is off. */
    activeKeyId,
    /** Whether new values of the column are sealed. */
    protects,
    seal,
    open,
    /** A JSON value as a jsonb column stores it: sealed inside a marker object, or as it is. */
    sealJson(tenantId: string, column: ProtectedColumn, value: unknown): unknown {
      return protects(column) ? { [JSON_MARKER]: seal(tenantId, column, JSON.stringify(value)) } : value;
    },
    openJson(tenantId: string, column: ProtectedColumn, stored: unknown): unknown {
      const sealed =
        stored && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>)[JSON_MARKER] : undefined;
      return typeof sealed === 'string' && Object.keys(stored as object).length === 1 ? JSON.parse(open(tenantId, column, sealed)) : stored;
    },
    /** Whether a stored value should be sealed again: plain while protected, or sealed with another key than the active one. */
    needsResealing(column: ProtectedColumn, stored: string): boolean {
      if (!protects(column)) return false;
      return !isSealed(stored) || stored.split('.')[1] !== activeKeyId;
    },
  };
}

export type ContentCipher = ReturnType<typeof createContentCipher>;

function isSealed(value: string): boolean {
  return value.startsWith(`${PREFIX}.`) && value.split('.').length === 4;
}

/** The cipher of a process where content protection is off: values are stored and read as they are. */
export const PLAIN_CONTENT: ContentCipher = createContentCipher({ keys: new Map(), columns: new Set() });

/** The protected column a run event's data belongs to: tool calls and their approvals are tool payloads. */
export const runEventColumn = (type: string): ProtectedColumn =>
  type.startsWith('tool.') || type.startsWith('approval.') ? 'ToolPayloads' : 'RunEventData';

/** A run event's data as the outbox ships it (sealed while content protection is on), opened for the event's tenant. */
export const openRunEventData = (cipher: ContentCipher, event: { tenantId: string; type: string; data: unknown }) =>
  cipher.openJson(event.tenantId, runEventColumn(event.type), event.data) as Record<string, unknown>;
