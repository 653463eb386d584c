import { randomUUID } from 'node:crypto';
import { isUuid, notFound, validationError, type Caller } from '@hangar/platform';
import type { AuditWriter } from '../clients/ports.js';
import type { ScoreRepository, ScoreRow } from './score.repository.js';

const SCORE_KINDS = ['Numeric', 'Boolean', 'Categorical'] as const;
/** Who scored: a person through the API, or online evaluation's judge. */
const SCORE_SOURCES = ['Human', 'Evaluator'] as const;

export interface FeedbackRequest {
  name?: string;
  messageId?: string;
  kind?: string;
  value?: number;
  textValue?: string;
  comment?: string;
  /** `Human` when absent; only the evaluation service says `Evaluator`. */
  source?: string;
}

/** Feedback scores on runs (SPEC "Feedback"); every change is audited. The caller checked the run is the tenant's. */
export function createFeedback(deps: { scores: ScoreRepository; /** Never throws (see auditOrLog). */ audit: AuditWriter }) {
  const auditScore = (caller: Caller, action: string, score: ScoreRow) =>
    deps.audit(caller, {
      action,
      resourceType: 'run-score',
      resourceId: score.id,
      details: {
        runId: score.runId,
        messageId: score.messageId,
        name: score.name,
        kind: score.kind,
        value: score.value,
        textValue: score.textValue,
      },
    });

  return {
    /** Same author, name and target again updates the score; a blank name is `overall`, a blank messageId the whole run. */
    async save(caller: Caller, runId: string, request: FeedbackRequest) {
      const kind = checkScore(request);
      const source = request.source ?? 'Human';
      if (!(SCORE_SOURCES as readonly string[]).includes(source)) {
        throw validationError(`source must be one of ${SCORE_SOURCES.join(', ')}`, [
          { path: 'source', message: `must be one of ${SCORE_SOURCES.join(', ')}` },
        ]);
      }
      const saved = await deps.scores.saveScore(caller.tenantId, {
        id: randomUUID(),
        runId,
        messageId: request.messageId?.trim() || null,
        name: request.name?.trim() || 'overall',
        kind,
        value: kind === 'Categorical' ? null : request.value!,
        textValue: kind === 'Categorical' ? request.textValue!.trim() : null,
        source,
        author: caller.userId ?? caller.actor,
        comment: request.comment?.trim() || null,
      });
      await auditScore(caller, saved.created ? 'feedback.created' : 'feedback.updated', saved.score);
      return saved;
    },

    list: (caller: Caller, runId: string) => deps.scores.scores(caller.tenantId, runId),

    async delete(caller: Caller, runId: string, scoreId: string) {
      const deleted = isUuid(scoreId) ? await deps.scores.deleteScore(caller.tenantId, runId, scoreId) : undefined;
      if (!deleted) throw notFound(`score ${scoreId} not found`);
      await auditScore(caller, 'feedback.deleted', deleted);
    },
  };
}

function checkScore(request: FeedbackRequest) {
  const kind = request.kind ?? (request.textValue !== undefined ? 'Categorical' : 'Numeric');
  if (!(SCORE_KINDS as readonly string[]).includes(kind)) {
    throw validationError(`kind must be one of ${SCORE_KINDS.join(', ')}`, [
      { path: 'kind', message: `must be one of ${SCORE_KINDS.join(', ')}` },
    ]);
  }
  if (kind === 'Categorical' && !request.textValue?.trim()) {
    throw validationError('a Categorical score needs textValue', [{ path: 'textValue', message: 'is required for kind Categorical' }]);
  }
  if (kind !== 'Categorical' && (request.value === undefined || !Number.isFinite(request.value))) {
    throw validationError(`a ${kind} score needs a numeric value`, [{ path: 'value', message: `is required for kind ${kind}` }]);
  }
  if (kind === 'Boolean' && request.value !== 0 && request.value !== 1) {
    throw validationError('a Boolean score is 0 or 1', [{ path: 'value', message: 'must be 0 or 1 for kind Boolean' }]);
  }
  return kind;
}
