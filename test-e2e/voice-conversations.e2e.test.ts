import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  spokenAudio,
  startHangar,
  startMockOpenAI,
  startMockSpeech,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockOpenAI,
  type MockSpeech,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Images and voice", the voice conversation WebSocket: 16 kHz PCM in, utterances cut by
 * quiet or a commit, transcribed by the (mock) speech API, answered by runs of kind Voice in one
 * session, spoken back as MP3 frames; and its limits, each with its close code.
 */

const acme = { 'x-hangar-tenant': 'acme' };
const RATE = 16_000;
let speech: MockSpeech;
let models: MockOpenAI;
let hangar: HangarUnderTest;
/** The same, with short IdleTimeout and MaxConnectionDuration, for the tests of those two alone. */
let strict: HangarUnderTest;

interface Conversation {
  socket: WebSocket;
  frames: any[];
  audio: Buffer[];
  closed: Promise<{ code: number; reason: string }>;
  next(type: string, where?: (frame: any) => boolean): Promise<any>;
}

/** A client of the route, recording every frame it receives. */
function connect(
  agent: string,
  options: { query?: string; headers?: Record<string, string>; target?: HangarUnderTest } = {},
): Conversation {
  const url = `${(options.target ?? hangar).url.replace(/^http/, 'ws')}/api/voice/conversations/${agent}${options.query ?? ''}`;
  const socket = new WebSocket(url, { headers: options.headers ?? { authorization: `Bearer ${TEST_TOKEN}`, ...acme } });
  const frames: any[] = [];
  const audio: Buffer[] = [];
  socket.on('message', (data: Buffer, binary: boolean) =>
    binary ? audio.push(Buffer.from(data)) : frames.push(JSON.parse(data.toString())),
  );
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on('error', () => undefined);
  return {
    socket,
    frames,
    audio,
    closed,
    next: (type, where = () => true) =>
      // Generous: on the split shape a turn crosses four processes, and CI runs two such files at once on two cores.
      eventually(() => frames.find((frame) => frame.type === type && where(frame)), `a ${type} frame`, 30_000),
  };
}

/** A conversation once the tenant has room for one (the ends of closed ones are recorded a moment after they close). */
const admitted = (agent = 'concierge') =>
  eventually(async () => {
    const talk = connect(agent);
    const outcome = await Promise.race([talk.next('ready').then(() => 'ready'), talk.closed.then(({ code }) => code)]);
    return outcome === 'ready' ? talk : undefined;
  }, 'a conversation admitted');

const silence = (ms: number) => Buffer.alloc(Math.round((RATE * ms) / 1000) * 2);
const tone = (ms: number) => {
  const samples = Math.round((RATE * ms) / 1000);
  const pcm = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index++)
    pcm.writeInt16LE(Math.round(9000 * Math.sin((2 * Math.PI * 300 * index) / RATE)), index * 2);
  return pcm;
};

/** Streams quiet as a live microphone does, every 100 ms, until `until` settles. */
async function keepStreaming<T>(conversation: Conversation, until: Promise<T>): Promise<T> {
  let done = false;
  until.finally(() => (done = true)).catch(() => undefined);
  while (!done && conversation.socket.readyState === WebSocket.OPEN) {
    conversation.socket.send(silence(100));
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return until;
}

beforeAll(async () => {
  [speech, models] = await Promise.all([startMockSpeech(), startMockOpenAI()]);
  const overrides = (conversation: Record<string, unknown>) => ({
    Tenancy: { Enabled: true, AllowHeaderResolution: true },
    Providers: { mock: { Kind: 'OpenAICompatible', Endpoint: models.url, ApiKey: 'sk-models' } },
    // Transcriptions are priced, so a tenant's Cost quota counts them (Quotas:Enabled is the default).
    Pricing: { Voice: { ElevenLabs: { scribe_v1: { PerMillionCharacters: null, PerMinute: 0.4 } } } },
    Voice: {
      Endpoint: speech.url,
      DefaultVoiceId: 'rachel',
      SynthesisModelId: 'eleven_flash_v2_5',
      TranscriptionModelId: 'scribe_v1',
      MaxConcurrentRequests: 20,
      RequireApproval: true,
      Conversation: conversation,
    },
  });
  [hangar, strict] = await Promise.all([
    startHangar({ modules: allInOneModules(), overrides: overrides({ MaxUtteranceBytes: 96_000, PersistAudio: true }) }),
    startHangar({ modules: allInOneModules(), overrides: overrides({ IdleTimeout: '1.5s', MaxConnectionDuration: '4s' }) }),
  ]);
  const strictAgent = await strict.request('POST', '/api/agents', {
    body: { name: 'concierge', model: { provider: 'mock', model: 'concierge' } },
    headers: acme,
  });
  expect(strictAgent.status, strictAgent.text).toBe(201);
  for (const tenant of ['acme', 'globex']) {
    const agent = await hangar.request('POST', '/api/agents', {
      body: { name: 'concierge', model: { provider: 'mock', model: 'concierge' }, instructions: 'Answer briefly.' },
      headers: { 'x-hangar-tenant': tenant },
    });
    expect(agent.status, agent.text).toBe(201);
  }
  // A butler acts through another agent, a tool call of its own: it asks the concierge, then says what it heard.
  models.script('butler', (request) => {
    const last = request.messages.at(-1)!;
    return last.role === 'tool'
      ? { text: `done: ${String(last.content)}` }
      : { toolCall: { name: 'call_concierge', args: { message: 'book a table' } } };
  });
  const butler = await hangar.request('POST', '/api/agents', {
    body: { name: 'butler', model: { provider: 'mock', model: 'butler' }, agents: ['concierge'] },
    headers: acme,
  });
  expect(butler.status, butler.text).toBe(201);
});

afterAll(async () => {
  await Promise.all([hangar?.stop(), strict?.stop()]);
  await Promise.all([speech?.close(), models?.close()]);
});

describe('a voice conversation', () => {
  it('answers two spoken turns with two runs of kind Voice in one session, and speaks each answer back', async () => {
    const [first, second] = await Promise.all([
      spokenAudio('what is the weather like', { format: 'pcm' }),
      spokenAudio('thank you very much', { format: 'pcm' }),
    ]);
    speech.hears(first, 'what is the weather like');
    speech.hears(second, 'thank you very much');
    const talk = connect('concierge');
    const ready = await talk.next('ready');
    expect(ready).toMatchObject({ inputSampleRate: RATE, outputMediaType: 'audio/mpeg', sessionId: expect.stringMatching(/^voice-/) });

    // Turn 1 ends by itself: the quiet after it.
    talk.socket.send(Buffer.concat([silence(300), first]));
    await keepStreaming(
      talk,
      talk.next('turn_end', (frame) => frame.turn === 1),
    );
    const audioAfterFirst = talk.audio.length;
    expect(audioAfterFirst).toBeGreaterThan(0);
    // Turn 2 ends when the client commits it.
    talk.socket.send(second);
    talk.socket.send(JSON.stringify({ type: 'commit' }));
    await keepStreaming(
      talk,
      talk.next('turn_end', (frame) => frame.turn === 2),
    );
    talk.socket.send(JSON.stringify({ type: 'end' }));
    expect(await talk.closed).toMatchObject({ code: 1000 });

    const transcripts = talk.frames.filter((frame) => frame.type === 'transcript').map((frame) => frame.text);
    expect(transcripts).toEqual(['what is the weather like', 'thank you very much']);
    const replies = talk.frames.filter((frame) => frame.type === 'reply');
    expect(replies.map((frame) => frame.text)).toEqual(['mock: what is the weather like', 'mock: thank you very much']);
    // The answers were spoken: the speech API heard them, and MP3 came back after each.
    expect(speech.requests.filter((request) => request.kind === 'speech').map((request) => request.json?.text)).toEqual(
      expect.arrayContaining(['mock: what is the weather like', 'mock: thank you very much']),
    );
    expect(talk.audio.length).toBeGreaterThan(audioAfterFirst);
    const spoken = Buffer.concat(talk.audio);
    expect(spoken.subarray(0, 3).toString('latin1') === 'ID3' || spoken[0] === 0xff).toBe(true);
    const turnEnds = talk.frames.filter((frame) => frame.type === 'turn_end');
    expect(turnEnds).toHaveLength(2);
    for (const end of turnEnds) expect(end.firstAudioMs).toBeGreaterThanOrEqual(0);
    // PersistAudio: both sides of each turn are attachments of the session.
    const attachments = await hangar.request('GET', `/api/attachments?sessionId=${ready.sessionId}`, { headers: acme });
    const stored = new Map(attachments.body.map((attachment: any) => [attachment.id, attachment.mediaType]));
    for (const end of turnEnds) {
      expect(stored.get(end.utteranceAttachmentId)).toBe('audio/wav');
      expect(stored.get(end.replyAttachmentId)).toBe('audio/mpeg');
    }

    for (const reply of replies) {
      const run = await hangar.request('GET', `/api/runs/${reply.runId}`, { headers: acme });
      expect(run.body).toMatchObject({ kind: 'Voice', status: 'Completed', sessionId: ready.sessionId, agentName: 'concierge' });
    }
    const session = await hangar.request('GET', `/api/sessions/${ready.sessionId}`, { headers: acme });
    expect(session.status, session.text).toBe(200);
    expect(JSON.stringify(session.body)).toContain('thank you very much');
  });

  it('asks the client to decide each tool call of a turn (Voice:RequireApproval), and speaks the answer once it did', async () => {
    const request = await spokenAudio('book a table for two', { format: 'pcm' });
    speech.hears(request, 'book a table for two');
    const talk = await admitted('butler');
    const say = async () => {
      talk.socket.send(request);
      talk.socket.send(JSON.stringify({ type: 'commit' }));
    };
    await say();
    const asked = await keepStreaming(
      talk,
      talk.next('approval', (frame) => frame.turn === 1),
    );
    expect(asked).toMatchObject({ toolName: 'call_concierge', runId: expect.any(String) });
    expect(JSON.parse(asked.arguments)).toEqual({ message: 'book a table' });
    const waiting = await hangar.request('GET', `/api/runs/${asked.runId}`, { headers: acme });
    expect(waiting.body.status).toBe('AwaitingApproval');
    // Nothing ran yet: the concierge has not been asked.
    const tree = async () => (await hangar.request('GET', `/api/runs/${asked.runId}/tree`, { headers: acme })).body;
    expect(JSON.stringify(await tree())).not.toContain('"agentName":"concierge"');

    talk.socket.send(JSON.stringify({ type: 'approval', approvalId: 'not-one-of-ours', approved: true }));
    expect(await talk.next('error', (frame) => frame.errorType === 'not_found')).toBeTruthy();
    talk.socket.send(JSON.stringify({ type: 'approval', approvalId: asked.approvalId, approved: true }));
    await keepStreaming(
      talk,
      talk.next('turn_end', (frame) => frame.turn === 1),
    );
    const approvedReply = talk.frames.find((frame) => frame.type === 'reply' && frame.turn === 1);
    expect(approvedReply.text).toContain('mock: book a table');
    expect(JSON.stringify(await tree())).toContain('"agentName":"concierge"');

    // The client ends the conversation right after its second request: the decision it then sends still counts.
    await say();
    talk.socket.send(JSON.stringify({ type: 'end' }));
    const second = await talk.next('approval', (frame) => frame.turn === 2);
    talk.socket.send(JSON.stringify({ type: 'approval', approvalId: second.approvalId, approved: false, comment: 'not tonight' }));
    expect(await talk.closed).toMatchObject({ code: 1000 });
    expect(talk.frames.find((frame) => frame.type === 'reply' && frame.turn === 2).text).toContain('not tonight');
  });

  it('refuses a sixth conversation of a tenant with 4429, and admits one again once another closed', async () => {
    const open = Array.from({ length: 5 }, () => connect('concierge'));
    await Promise.all(open.map((talk) => talk.next('ready')));
    // Live microphones: none of the five goes idle while the test runs.
    const microphones = setInterval(() => {
      for (const talk of open) if (talk.socket.readyState === WebSocket.OPEN) talk.socket.send(silence(100));
    }, 200);
    const sixth = connect('concierge');
    expect(await sixth.closed).toMatchObject({ code: 4429 });
    // Another tenant's conversations are its own to count.
    const other = connect('concierge', { headers: { authorization: `Bearer ${TEST_TOKEN}`, 'x-hangar-tenant': 'globex' } });
    await other.next('ready');
    other.socket.close();
    open[0].socket.send(JSON.stringify({ type: 'end' }));
    expect(await open[0].closed).toMatchObject({ code: 1000 });
    const again = await admitted();
    clearInterval(microphones);
    expect(open.slice(1).map((talk) => talk.socket.readyState)).toEqual([WebSocket.OPEN, WebSocket.OPEN, WebSocket.OPEN, WebSocket.OPEN]);
    for (const talk of [...open.slice(1), again]) talk.socket.close();
    await Promise.all([...open, again].map((talk) => talk.closed));
  });

  it('closes an idle conversation with 4408, an oversized utterance with 4413 and an unknown agent with 4404', async () => {
    const started = Date.now();
    const idle = connect('concierge', { target: strict });
    await idle.next('ready');
    expect(await idle.closed).toMatchObject({ code: 4408 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_500);

    const loud = await admitted();
    loud.socket.send(tone(4_000));
    expect(await loud.closed).toMatchObject({ code: 4413, reason: expect.stringContaining('MaxUtteranceBytes') });

    expect(await connect('nobody').closed).toMatchObject({ code: 4404 });
    // Another tenant's agent is unknown here, like one that does not exist.
    const foreign = connect('butler', { headers: { authorization: `Bearer ${TEST_TOKEN}`, 'x-hangar-tenant': 'globex' } });
    expect(await foreign.closed).toMatchObject({ code: 4404 });
    expect(foreign.frames).toEqual([]);
  });

  it('closes a conversation that reaches Voice:Conversation:MaxConnectionDuration with 4410, however lively', async () => {
    const started = Date.now();
    const talk = connect('concierge', { target: strict });
    await talk.next('ready');
    const { code } = await keepStreaming(talk, talk.closed);
    expect(code).toBe(4410);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4_000);
  });

  it('keeps at most two utterances waiting for a turn and tells the client of one more it did not hear', async () => {
    let release!: () => void;
    // The first utterance's transcription waits, so the turn under way lasts.
    speech.script({ hold: new Promise<void>((resolve) => (release = resolve)) });
    const before = speech.requests.length;
    const talk = await admitted();
    for (let utterance = 0; utterance < 4; utterance++) {
      talk.socket.send(tone(300));
      talk.socket.send(JSON.stringify({ type: 'commit' }));
      if (utterance === 0) await eventually(() => speech.requests.length > before || undefined, 'the first transcription');
    }
    const refused = await talk.next('error', (frame) => frame.errorType === 'rate_limited');
    expect(refused).toMatchObject({ turn: null, detail: expect.stringContaining('not heard') });
    release();
    await talk.next('turn_end', (frame) => frame.turn === 3);
    talk.socket.send(JSON.stringify({ type: 'end' }));
    expect(await talk.closed).toMatchObject({ code: 1000 });
    expect(talk.frames.filter((frame) => frame.type === 'turn_end').map((frame) => frame.turn)).toEqual([1, 2, 3]);
  });

  it('answers a turn over the tenant’s Cost quota with an error frame quota_exceeded, and goes on', async () => {
    const initech = { 'x-hangar-tenant': 'initech' };
    const agent = await hangar.request('POST', '/api/agents', {
      body: { name: 'concierge', model: { provider: 'mock', model: 'concierge' } },
      headers: initech,
    });
    expect(agent.status, agent.text).toBe(201);
    const rule = await hangar.request('PUT', '/api/quotas/voice', {
      body: { metric: 'Cost', period: 'Day', limit: 0.0001 },
      headers: initech,
    });
    expect(rule.status, rule.text).toBe(201);
    const said = await spokenAudio('book a table for two', { format: 'pcm' });
    speech.hears(said, 'book a table for two');
    const transcriptions = () => speech.requests.filter((request) => request.kind === 'transcription').length;
    const talk = connect('concierge', { headers: { authorization: `Bearer ${TEST_TOKEN}`, ...initech } });
    await talk.next('ready');

    // The first transcription is admitted (nothing used yet) and paid for, which uses the rule up:
    // the turn's run is refused.
    talk.socket.send(said);
    talk.socket.send(JSON.stringify({ type: 'commit' }));
    expect(await talk.next('error', (frame) => frame.turn === 1)).toMatchObject({ errorType: 'quota_exceeded' });
    expect(talk.frames.find((frame) => frame.type === 'transcript')).toMatchObject({ turn: 1, text: 'book a table for two' });
    const used = (await hangar.request('GET', '/api/quotas', { headers: initech })).body[0].used;
    expect(used).toBeGreaterThan(0.0001);

    // The next is refused before the speech API hears it; the conversation is still open.
    const heard = transcriptions();
    talk.socket.send(said);
    talk.socket.send(JSON.stringify({ type: 'commit' }));
    expect(await talk.next('error', (frame) => frame.turn === 2)).toMatchObject({ errorType: 'quota_exceeded' });
    expect(transcriptions()).toBe(heard);
    expect(talk.frames.filter((frame) => frame.type === 'transcript' || frame.type === 'reply').map((frame) => frame.turn)).toEqual([1]);
    talk.socket.send(JSON.stringify({ type: 'end' }));
    expect(await talk.closed).toMatchObject({ code: 1000 });
  });

  it('refuses a handshake without credentials with 401 and a plain GET with 426', async () => {
    const anonymous = new WebSocket(`${hangar.url.replace(/^http/, 'ws')}/api/voice/conversations/concierge`, { headers: acme });
    const status = await new Promise<number>((resolve) => {
      anonymous.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      anonymous.on('error', () => undefined);
    });
    expect(status).toBe(401);
    expectProblem(await hangar.request('GET', '/api/voice/conversations/concierge', { headers: acme }), 426, 'upgrade_required');
  });
});
