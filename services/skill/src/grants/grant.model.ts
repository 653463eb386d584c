export type GrantStatus = 'Active' | 'Expired' | 'Revoked';

/** A grant that lets a tenant's skill scripts run: the whole skill, or one script of it. */
export interface Grant {
  id: string;
  skillName: string;
  /** Null: every script of the skill. */
  scriptName: string | null;
  expiresAt: string | null;
  status: GrantStatus;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
}
