/** Roles in order of authority: each includes the ones before it (API.md: Admin ⊇ Operator ⊇ Reader). */
export const ROLES = ['Reader', 'Operator', 'Admin'] as const;
export type Role = (typeof ROLES)[number];

/** Whether a held role (possibly none, or an unknown name) includes the required one. */
export const roleIncludes = (held: string | null | undefined, required: Role) =>
  !!held && (ROLES as readonly string[]).indexOf(held) >= ROLES.indexOf(required);

/** Offset paging: `skip` below 0 reads as 0, `take` is clamped to 1..200 and never rejected. */
export const clampPage = (skip: number, take: number) => ({ skip: Math.max(0, skip), take: Math.min(200, Math.max(1, take)) });
