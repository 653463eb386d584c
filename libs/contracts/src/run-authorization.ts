/** Operations a host's run-authorization handler is asked about (SPEC Authentication 7). */
export type RunOperation =
  | 'sessions.list'
  | 'sessions.read'
  | 'sessions.update'
  | 'sessions.delete'
  | 'sessions.branch'
  | 'attachments.upload'
  | 'attachments.list'
  | 'attachments.read'
  | 'attachments.delete'
  | 'runs.start'
  | 'runs.list'
  | 'runs.read';

export interface RunAuthorizationRequest {
  operation: RunOperation;
  tenantId: string;
  actor: string;
  userId?: string;
  role?: string;
  /** The session, attachment or run id of a single-record operation; the agent name for `runs.start`. */
  resourceId?: string;
}

/**
 * A host's handler: return false to deny. A denied list or upload is 403; a denied single-record
 * read or delete is 404, indistinguishable from an unknown record. Export it as `authorizeRun`
 * from the module named by `Hangar:Api:RunAuthorizationModule`.
 */
export type RunAuthorizationHandler = (request: RunAuthorizationRequest) => boolean | Promise<boolean>;

export const defineRunAuthorization = (handler: RunAuthorizationHandler): RunAuthorizationHandler => handler;
