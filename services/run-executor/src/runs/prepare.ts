import type { AgentDefinition } from '@hangar/contracts';
import { forbidden, HangarError, validationError, type Caller, type HangarConfig } from '@hangar/platform';
import type {
  AgentLoader,
  AttachmentContent,
  AttachmentReader,
  PromptEstimate,
  SessionGateway,
  TenantSettingsSource,
} from '../clients/ports.js';
import type { Admission } from './admission.js';
import type { HistoryCompactor } from './compaction.js';
import type { StartRunRequest } from './run.model.js';

export interface PrepareDeps {
  agents: AgentLoader;
  admit: Admission;
  /** The tenant's own provider bindings (cached). */
  tenantSettings: TenantSettingsSource;
  sessions: SessionGateway;
  attachments: AttachmentReader;
  settings: Pick<HangarConfig, 'MaxParameterValueLength' | 'Preflight'>;
  /** `UtilityModel`'s compaction: a session run over its window that would fit once compacted is not refused. */
  compaction?: Pick<HistoryCompactor, 'fitsOnceCompacted'>;
}

export type SessionMessage = { role: string; content: unknown };

/** The text a stored session message carries: its text parts (attachment references are not text). */
export const textOf = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part: any) => (typeof part?.text === 'string' ? part.text : '')).join('')
      : JSON.stringify(content);

/** The prompt a run sends before its model turns: the session's history, then the request's messages. */
export const promptOf = (history: SessionMessage[], messages: StartRunRequest['messages']) => [
  ...history.map((message) => ({ role: message.role, content: textOf(message.content) })),
  ...messages,
];

export function checkParameters(
  definition: AgentDefinition,
  parameters: StartRunRequest['parameters'],
  maxValueLength: number,
): Map<string, string> {
  const declared = new Map(definition.parameters.map((parameter) => [parameter.name, parameter]));
  const values = new Map<string, string>();
  parameters.forEach((parameter, index) => {
    if (!declared.has(parameter.name))
      throw validationError(`unknown parameter "${parameter.name}"`, [
        { path: `parameters[${index}].name`, message: 'is not a parameter of this agent' },
      ]);
    if (values.has(parameter.name))
      throw validationError(`parameter "${parameter.name}" is given twice`, [
        { path: `parameters[${index}].name`, message: 'must not repeat' },
      ]);
    if (Buffer.byteLength(parameter.value, 'utf8') > maxValueLength) {
      throw validationError(`parameter "${parameter.name}" is longer than ${maxValueLength} bytes`, [
        { path: `parameters[${index}].value`, message: `must be at most ${maxValueLength} bytes of UTF-8 (MaxParameterValueLength)` },
      ]);
    }
    values.set(parameter.name, parameter.value);
  });
  for (const parameter of definition.parameters) {
    if (parameter.required && !values.has(parameter.name)) {
      throw validationError(`parameter "${parameter.name}" is required`, [
        { path: 'parameters', message: `must include "${parameter.name}"` },
      ]);
    }
  }
  return values;
}

export function createPreparation(deps: PrepareDeps) {
  async function readAttachments(caller: Caller, ids: string[]): Promise<AttachmentContent[]> {
    if (new Set(ids).size !== ids.length)
      throw validationError('an attachment is named twice', [{ path: 'attachments', message: 'must not repeat' }]);
    return Promise.all(
      ids.map(async (id, index) => {
        try {
          return await deps.attachments.read(caller, id);
        } catch (error) {
          if ((error as HangarError).status === 404) {
            throw validationError(`attachment ${id} does not exist`, [
              { path: `attachments[${index}]`, message: 'names no attachment of this tenant' },
            ]);
          }
          throw error;
        }
      }),
    );
  }

  return {
    /**
     * Every check that refuses a run before it exists (429 with `admit`, 404, 400, 403, 501), and
     * what the run needs. The quota admission, the agent's load and (for a run about to execute)
     * its tenant's state and provider bindings are asked side by side; a refusal by quota comes first.
     */
    async prepare(
      caller: Caller,
      request: StartRunRequest,
      options: { admit: boolean; tenant: boolean; onlyDeclaredParameters?: boolean },
    ) {
      const [admitted, loaded, settings] = await Promise.allSettled([
        options.admit ? deps.admit(caller, request.agentName) : undefined,
        deps.agents.load(caller, request.agentName, request.agentVersion),
        options.tenant ? deps.tenantSettings(caller) : undefined,
      ]);
      if (admitted.status === 'rejected') throw admitted.reason;
      if (loaded.status === 'rejected') throw loaded.reason;
      if (settings.status === 'rejected') throw settings.reason;
      // The gateway refuses a disabled tenant's requests; this refuses its queued and continued runs too.
      if (settings.value && !settings.value.enabled) throw forbidden(`tenant "${caller.tenantId}" is disabled`, 'tenant_disabled');
      const { definition, version } = loaded.value;
      const tenant = settings.value && { tenantId: caller.tenantId, providers: settings.value.providers };
      // Offered parameters (a workflow run's, to each of its agent steps) are given where the agent declares them.
      const given = options.onlyDeclaredParameters
        ? request.parameters.filter((parameter) => definition.parameters.some((declared) => declared.name === parameter.name))
        : request.parameters;
      const parameters = checkParameters(definition, given, deps.settings.MaxParameterValueLength);
      if (request.messages.length === 0) throw validationError('a run needs a message', [{ path: 'message', message: 'is required' }]);
      const attachments = await readAttachments(caller, request.attachments);
      const history = request.sessionId !== undefined ? await deps.sessions.open(caller, request.sessionId, definition.name) : [];
      let estimate: PromptEstimate | undefined;
      if (deps.settings.Preflight.Enabled) {
        estimate = await deps.agents.estimate(caller, definition.name, promptOf(history, request.messages), parameters);
        // With a UtilityModel, a session too long for the window is compacted when the run starts, if that can make it fit.
        const compactable =
          estimate.wouldBeRejected &&
          history.length > 0 &&
          estimate.allowedPromptTokens !== null &&
          deps.compaction !== undefined &&
          (await deps.compaction.fitsOnceCompacted(caller, definition.name, request.messages, parameters, estimate.allowedPromptTokens));
        if (estimate.wouldBeRejected && !compactable) {
          throw new HangarError(
            'validation',
            `the prompt is estimated at ${estimate.estimatedPromptTokens} tokens; the model allows ${estimate.allowedPromptTokens}`,
            { estimatedPromptTokens: estimate.estimatedPromptTokens, allowedPromptTokens: estimate.allowedPromptTokens },
            'context_window_exceeded',
          );
        }
      }
      // The estimate goes with the run: its history's compaction reads it rather than asking again.
      return { definition, version, parameters, attachments, history, tenant, estimate };
    },

    /** The pre-flight check's numbers for a run request, whether or not the check is on; opens no session. */
    async estimate(caller: Caller, request: StartRunRequest): Promise<PromptEstimate> {
      const history = request.sessionId !== undefined ? await deps.sessions.history(caller, request.sessionId) : [];
      const parameters = new Map(request.parameters.map((parameter) => [parameter.name, parameter.value]));
      return deps.agents.estimate(caller, request.agentName, promptOf(history, request.messages), parameters);
    },
  };
}

export type Preparation = ReturnType<typeof createPreparation>;
export type PreparedRun = Awaited<ReturnType<Preparation['prepare']>>;
