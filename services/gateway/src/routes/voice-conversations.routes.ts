import { HangarError } from '@hangar/platform';
import { z } from 'zod';
import { AgentNameParams, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';
import { takeUpgrade } from '../http/upgrade.js';
import { bridgeConversation } from '../http/voice-socket.js';

/** API.md "Images and voice": the voice conversation WebSocket. */
export const voiceConversationRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/voice/conversations/{name}',
    operationId: 'converseByVoice',
    summary: 'Talk with an agent (WebSocket)',
    description:
      'Opens a WebSocket: binary frames in are 16-bit little-endian mono PCM at Voice:Conversation:InputSampleRate; each utterance (ended by 700 ms of quiet, or a {"type":"commit"} text frame) is transcribed, answered by a run of kind Voice in the session (`sessionId`, or a new one) and spoken back as binary frames of Voice:Conversation:OutputMediaType, between JSON text frames ready, transcript, run, reply, turn_end and error. {"type":"end"} closes after the turns under way. Close codes: 1000 normal, 1011 failure, 1013 try later, 4404 unknown agent or no speech configured, 4408 idle, 4410 MaxConnectionDuration, 4413 utterance too large, 4429 MaxConcurrentConnectionsPerTenant.',
    tag: 'Voice',
    auth: { role: 'Operator', scope: 'RunsWrite' },
    params: AgentNameParams,
    query: z.object({
      sessionId: z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'must be a session id')
        .optional()
        .describe('Continue this session; absent: a new session (named in the ready frame)'),
    }),
    runAuthorization: { operation: 'runs.start', denial: 'forbid', resourceId: (params) => params.name },
    responses: {
      101: { description: 'Switching to the WebSocket protocol' },
      426: problemResponse('Not a WebSocket opening handshake'),
      503: problemResponse('This gateway is draining'),
    },
    async handler({ params, query, caller, request }, { voice, webSockets, logger, draining }) {
      // Draining, this gateway starts no conversation (its turns are runs); those open go on until it stops.
      if (draining())
        throw new HangarError('unavailable', 'this instance is shutting down and starts no conversation; retry on another', {}, 'draining');
      const upgrade = takeUpgrade(request);
      if (!upgrade)
        throw new HangarError('upgradeRequired', 'this route speaks WebSocket only: open it with an Upgrade: websocket handshake');
      webSockets.handleUpgrade(request, upgrade.socket, upgrade.head, (socket) =>
        bridgeConversation(
          socket,
          { agentName: params.name, sessionId: query.sessionId },
          (inputs, signal) => voice.converse(inputs, { caller, signal }),
          logger,
        ),
      );
      return { status: 101, sent: true };
    },
  }),
];
