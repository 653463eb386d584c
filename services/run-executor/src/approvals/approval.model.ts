export type ApprovalStatus = 'Pending' | 'Approved' | 'Denied' | 'Expired';

export interface ApprovalRow {
  id: string;
  runId: string;
  toolCallId: string;
  toolName: string;
  args: unknown;
  status: ApprovalStatus;
  decidedBy: string | null;
  comment: string | null;
  createdAt: string;
  expiresAt: string;
  decidedAt: string | null;
}
