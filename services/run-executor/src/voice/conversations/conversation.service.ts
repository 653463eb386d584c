import { randomUUID } from 'node:crypto';
import {
  classifyError,
  conversationFormat,
  createAsyncQueue,
  HangarError,
  speechFormat,
  notFound,
  type Caller,
  type HangarConfig,
  type Logger,
} from '@hangar/platform';
import type { AgentLoader, AttachmentWriter } from '../../clients/ports.js';
import type { StartRunRequest } from '../../runs/run.model.js';
import { recordedPayload, type RunUpdate } from '../../runs/run-update.js';
import type { VoiceService } from '../voice.service.js';
import { CONVERSATION_LIVENESS_MS, type ConversationRepository } from './conversation.repository.js';
import { CLOSE_CODES, speakable, type ConversationInput, type ConversationOutput } from './conversation.model.js';
import { createUtteranceDetector, wavFile } from './utterance-detector.js';

// Utterances heard while a turn runs wait for it; more than this many waiting is a client talking faster than turns go.
const MAX_WAITING_UTTERANCES = 2;

/**
 * Voice conversations (API.md "Images and voice"): audio in, cut into utterances, each transcribed,
 * answered by a run of kind `Voice` of the agent in the conversation's session, and spoken back in
 * `Voice:Conversation:OutputMediaType`. Turns run one after another; audio that arrives meanwhile
 * is the next utterance. Every `Voice:Conversation:*` limit is kept here; the transport only
 * translates messages and close codes.
 */
export function createConversationService(deps: {
  repository: ConversationRepository;
  voice: Pick<VoiceService, 'transcribe' | 'synthesize'>;
  /** Starts a run and streams its updates (the run engine's `start`). */
  runs: (caller: Caller, request: StartRunRequest, signal: AbortSignal) => AsyncGenerator<RunUpdate>;
  agents: Pick<AgentLoader, 'load'>;
  /** Decides a pending tool call of a run (the run engine's `decideApproval`). */
  decide: (caller: Caller, runId: string, approvalId: string, decision: { approved: boolean; comment?: string }) => Promise<unknown>;
  attachments: AttachmentWriter;
  logger: Logger;
  settings: Pick<HangarConfig, 'Voice' | 'RunRecording'>;
}) {
  const { Voice, RunRecording } = deps.settings;
  const talk = Voice.Conversation;
  const outputFormat = conversationFormat(Voice);
  const voiceId = talk.VoiceId ?? Voice.DefaultVoiceId;
  const { logger, repository } = deps;
  // This instance's open conversations, for a drain or a stop.
  const open = new Map<string, { finish(): Promise<void>; close(code: number, reason: string): void }>();
  const closeAll = () => {
    for (const conversation of open.values()) conversation.close(CLOSE_CODES.goingAway, 'this instance is stopping; reconnect');
  };

  return {
    /**
     * Drain: every open conversation takes no new utterance, finishes the turns under way and
     * closes (1001); those still going at the deadline close at once.
     */
    async drain(deadline: AbortSignal): Promise<void> {
      const finished = Promise.all([...open.values()].map((conversation) => conversation.finish()));
      const cut = new Promise<void>((resolve) =>
        deadline.aborted ? resolve() : deadline.addEventListener('abort', () => resolve(), { once: true }),
      );
      await Promise.race([finished, cut]);
      closeAll();
    },
    /** A stop: every open conversation closes now (1001). */
    closeAll,

    /**
     * Opens a conversation (refusals are thrown before any output: an unknown agent or no speech
     * configured 404, the tenant's `MaxConcurrentConnectionsPerTenant` reached 429) and returns
     * its outputs, which end with `closed`.
     */
    async converse(
      caller: Caller,
      opening: { agentName: string; sessionId?: string },
      inputs: AsyncIterable<ConversationInput>,
      signal: AbortSignal,
    ): Promise<AsyncGenerator<ConversationOutput>> {
      if (!Voice.SynthesisModelId || !Voice.TranscriptionModelId || !voiceId || !outputFormat)
        throw notFound(
          'voice conversations need speech both ways: Voice:SynthesisModelId, Voice:TranscriptionModelId and a voice (Voice:Conversation:VoiceId or Voice:DefaultVoiceId)',
        );
      await deps.agents.load(caller, opening.agentName);
      const id = randomUUID();
      const sessionId = opening.sessionId ?? `voice-${id}`;
      const admitted = await repository.open(
        { id, tenantId: caller.tenantId, agentName: opening.agentName, sessionId },
        talk.MaxConcurrentConnectionsPerTenant,
      );
      if (!admitted)
        throw new HangarError(
          'tooManyRequests',
          `this tenant has ${talk.MaxConcurrentConnectionsPerTenant} voice conversations open (Voice:Conversation:MaxConcurrentConnectionsPerTenant)`,
          {},
          'rate_limited',
        );
      return conversation({ caller, id, sessionId, agentName: opening.agentName }, inputs, signal);
    },
  };

  async function* conversation(
    opened: { caller: Caller; id: string; sessionId: string; agentName: string },
    inputs: AsyncIterable<ConversationInput>,
    signal: AbortSignal,
  ): AsyncGenerator<ConversationOutput> {
    const { caller, id } = opened;
    const outputs = createAsyncQueue<ConversationOutput>();
    const turnsAbort = new AbortController();
    const detector = createUtteranceDetector({
      sampleRate: talk.InputSampleRate,
      maxBytes: talk.MaxUtteranceBytes,
      maxDurationMs: talk.MaxUtteranceDuration,
    });
    const utterances: { pcm: Buffer; endedAt: number }[] = [];
    let turn = 0;
    // The run of each tool call waiting for a decision of this conversation's client.
    const awaiting = new Map<string, string>();
    let turning: Promise<void> | undefined;
    let closed = false;
    let finishing = false;

    const close = (code: number, reason: string) => {
      if (closed) return;
      closed = true;
      open.delete(id);
      turnsAbort.abort();
      clearTimeout(idle);
      clearTimeout(duration);
      clearInterval(beat);
      outputs.push({ type: 'closed', code, reason });
      outputs.end();
      repository
        .end(id, code)
        .catch((error) => logger.warn({ err: error, conversationId: id }, 'a voice conversation’s end was not recorded'));
    };
    const onDeparture = () => close(CLOSE_CODES.goingAway, 'the client went away');
    // Idle means nothing from the client while no turn runs: a client quiet while the agent thinks and speaks is listening.
    let idle: NodeJS.Timeout | undefined;
    const watchIdle = () => {
      clearTimeout(idle);
      if (!closed && !turning)
        idle = setTimeout(() => close(CLOSE_CODES.idle, 'nothing heard for Voice:Conversation:IdleTimeout'), talk.IdleTimeout);
    };
    watchIdle();
    const duration = setTimeout(
      () => close(CLOSE_CODES.durationReached, 'Voice:Conversation:MaxConnectionDuration reached'),
      talk.MaxConnectionDuration,
    );
    const beat = setInterval(
      () => repository.beat(id).catch((error) => logger.warn({ err: error, conversationId: id }, 'a voice conversation’s beat was lost')),
      CONVERSATION_LIVENESS_MS / 3,
    );

    /** A failure the conversation goes on after, as an `error` message; one nobody classified is logged too. */
    const reportFailure = (turnNumber: number | null, error: unknown, unexpected: string) => {
      const known = classifyError(error);
      if (!known) logger.error({ err: error, conversationId: id, turn: turnNumber }, unexpected);
      outputs.push({
        type: 'error',
        turn: turnNumber,
        errorType: known?.errorType ?? 'internal_error',
        detail: known?.message ?? unexpected,
      });
    };

    async function takeTurns() {
      for (let next = utterances.shift(); next && !closed; next = utterances.shift()) {
        turn += 1;
        try {
          await takeTurn(turn, next.pcm, next.endedAt);
        } catch (error) {
          if (closed) return;
          reportFailure(turn, error, 'the turn failed unexpectedly');
        }
      }
    }

    async function takeTurn(turnNumber: number, pcm: Buffer, endedAt: number) {
      const abort = turnsAbort.signal;
      const wav = wavFile(pcm, talk.InputSampleRate);
      const heard = await deps.voice.transcribe(caller, { audio: [wav] }, abort);
      const text = heard.text.trim();
      outputs.push({ type: 'transcript', turn: turnNumber, text });
      if (!text) return;
      let runId = '';
      let answer = '';
      const request: StartRunRequest = {
        agentName: opened.agentName,
        sessionId: opened.sessionId,
        messages: [{ role: 'user', content: text }],
        parameters: [],
        isStreaming: true,
        attachments: [],
        kind: 'Voice',
      };
      for await (const update of deps.runs(caller, request, abort)) {
        if (update.type === 'started') {
          runId = update.run.id;
          outputs.push({ type: 'run', turn: turnNumber, runId });
        } else if (update.type === 'approvals') {
          for (const approval of update.approvals) {
            awaiting.set(approval.id, runId);
            outputs.push({
              type: 'approval',
              turn: turnNumber,
              runId,
              approvalId: approval.id,
              toolName: approval.toolName,
              arguments: JSON.stringify(recordedPayload(RunRecording, approval.args)),
            });
          }
        } else if (update.type === 'finished') answer = update.outputText;
        else if (update.type === 'failed') {
          outputs.push({ type: 'error', turn: turnNumber, errorType: update.errorType, detail: update.message });
          return;
        }
      }
      await repository.countTurn(id).catch((error) => logger.warn({ err: error, conversationId: id }, 'a voice turn was not counted'));
      const spoken = speakable(answer, talk.MaxSpokenCharactersPerTurn);
      outputs.push({ type: 'reply', turn: turnNumber, runId, text: spoken });
      let firstAudioMs: number | null = null;
      const reply: Buffer[] = [];
      if (spoken) {
        const speech = await deps.voice.synthesize(caller, { text: spoken, voiceId: voiceId!, outputFormat }, abort);
        try {
          for await (const chunk of speech.audio) {
            firstAudioMs ??= Date.now() - endedAt;
            outputs.push({ type: 'audio', chunk });
            if (talk.PersistAudio) reply.push(chunk);
          }
        } finally {
          await speech.close();
        }
      }
      const persisted = talk.PersistAudio ? await persist(turnNumber, wav, reply, abort) : { utterance: null, reply: null };
      outputs.push({
        type: 'turn_end',
        turn: turnNumber,
        runId,
        firstAudioMs,
        utteranceAttachmentId: persisted.utterance,
        replyAttachmentId: persisted.reply,
      });
    }

    /** Voice:Conversation:PersistAudio: the turn's audio both ways, as attachments of the session. */
    async function persist(turnNumber: number, wav: Buffer, reply: Buffer[], abort: AbortSignal) {
      const store = (fileName: string, bytes: Buffer) =>
        deps.attachments.store(caller, { fileName, bytes, sessionId: opened.sessionId }, abort).then((stored) => stored.id);
      const { extension } = speechFormat(outputFormat!)!;
      return {
        utterance: await store(`voice-${id}-turn-${turnNumber}-heard.wav`, wav),
        reply: reply.length ? await store(`voice-${id}-turn-${turnNumber}-spoken.${extension}`, Buffer.concat(reply)) : null,
      };
    }

    const startTurns = () => {
      clearTimeout(idle);
      turning = takeTurns().finally(() => {
        turning = undefined;
        // An utterance heard as the last turn ended starts the next.
        if (utterances.length && !closed) startTurns();
        else watchIdle();
      });
    };
    const heardUtterance = (pcm: Buffer) => {
      if (finishing || utterances.length >= MAX_WAITING_UTTERANCES) {
        outputs.push({
          type: 'error',
          turn: null,
          errorType: finishing ? 'draining' : 'rate_limited',
          detail: finishing
            ? 'this instance is stopping: the utterance was not heard; reconnect'
            : `${MAX_WAITING_UTTERANCES} utterances already wait for the turn under way: this one was not heard`,
        });
        return;
      }
      utterances.push({ pcm, endedAt: Date.now() });
      if (!turning) startTurns();
    };

    /** The client's decision on a tool call its turn waits for; a refused one is an error frame, the conversation goes on. */
    async function decide(input: Extract<ConversationInput, { type: 'decision' }>) {
      const runId = awaiting.get(input.approvalId);
      try {
        if (!runId) throw notFound(`approval ${input.approvalId} is not waiting in this conversation`);
        await deps.decide(caller, runId, input.approvalId, { approved: input.approved, comment: input.comment });
        awaiting.delete(input.approvalId);
      } catch (error) {
        reportFailure(null, error, 'the decision failed');
      }
    }

    /** Closes once the turns under way have finished (their approvals still decided meanwhile). */
    const closeAfterTurns = async (code: number, reason: string) => {
      while (turning && !closed) await turning;
      close(code, reason);
    };
    /** The client is done. */
    let ending: Promise<void> | undefined;
    const finishThenClose = () => (ending ??= closeAfterTurns(CLOSE_CODES.normal, 'the conversation ended'));

    async function read() {
      for await (const input of inputs) {
        if (closed) return;
        if (input.type === 'decision') {
          await decide(input);
          continue;
        }
        // After the end only decisions count: a turn may still wait for one.
        if (ending) continue;
        watchIdle();
        if (input.type === 'audio') {
          for (const event of detector.push(input.pcm)) {
            if (event.type === 'too-large') {
              const key = event.limit === 'bytes' ? 'MaxUtteranceBytes' : 'MaxUtteranceDuration';
              close(CLOSE_CODES.utteranceTooLarge, `an utterance went past Voice:Conversation:${key}`);
              return;
            }
            heardUtterance(event.pcm);
          }
        } else {
          // A commit, or the end: what was said so far is an utterance either way.
          const pcm = detector.commit();
          if (pcm) heardUtterance(pcm);
          if (input.type === 'end') void finishThenClose();
        }
      }
      // The client's stream ended without an end: the same.
      await finishThenClose();
    }

    open.set(id, {
      finish() {
        finishing = true;
        return closeAfterTurns(CLOSE_CODES.goingAway, 'this instance is stopping; reconnect');
      },
      close,
    });
    signal.addEventListener('abort', onDeparture, { once: true });
    // The client may have left while it was admitted.
    if (signal.aborted) onDeparture();
    outputs.push({
      type: 'ready',
      conversationId: id,
      sessionId: opened.sessionId,
      inputSampleRate: talk.InputSampleRate,
      outputMediaType: talk.OutputMediaType,
    });
    read().catch((error) => {
      if (closed) return;
      logger.warn({ err: error, conversationId: id }, 'a voice conversation’s input failed');
      close(CLOSE_CODES.internalError, 'the conversation’s input failed');
    });
    try {
      yield* outputs.drain();
    } finally {
      signal.removeEventListener('abort', onDeparture);
      close(CLOSE_CODES.goingAway, 'the conversation’s reader went away');
      await turning?.catch(() => undefined);
    }
  }
}

export type ConversationService = ReturnType<typeof createConversationService>;
