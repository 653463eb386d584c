import { allInOneModules } from '@hangar/all-in-one';
import {
  eventually,
  httpRequest,
  silentWav,
  spokenAudio,
  startHangar,
  startMockSpeech,
  TEST_TOKEN,
  type HangarUnderTest,
  type MockSpeech,
} from '@hangar/testing';
import { expectProblem } from '@hangar/testing/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * API.md "Images and voice", speech: POST /api/voice/speech and /api/voice/transcriptions through
 * both adapters — the ElevenLabs-style API the Voice:* keys describe and OpenAI's speech API of a
 * provider named by Voice:Provider — against a mock speech server over real HTTP that speaks with
 * this machine's espeak-ng; priced per Pricing:Voice; Voice:MaxCharactersPerRequest,
 * MaxConcurrentRequests and Timeout; absent while no speech provider is configured.
 */

const acme = { 'x-hangar-tenant': 'acme' };
/**
 * What the calls that only need some speech say: the mock speaks each new text with espeak-ng and
 * lame, which on a loaded machine can take longer than this suite's Voice:Timeout (3 s); one text,
 * made before the tests, keeps their timing the provider's.
 */
const SAID = 'hello from hangar';
const globex = { 'x-hangar-tenant': 'globex' };
let mock: MockSpeech;
let eleven: HangarUnderTest;
let openai: HangarUnderTest;
let off: HangarUnderTest;

async function speak(target: HangarUnderTest, body: unknown, headers = acme) {
  const response = await fetch(`${target.url}/api/voice/speech`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Both of Voice:MaxConcurrentRequests' slots take a call again, well before Voice:Timeout (3 s) would free them anyway. */
async function bothSlotsFree() {
  const statuses = await eventually(
    async () => {
      const answers = await Promise.all([speak(eleven, { text: SAID }), speak(eleven, { text: SAID })]);
      return answers.every((answer) => answer.status === 200) ? answers.map((answer) => answer.status) : undefined;
    },
    'both slots free again',
    1_500,
  );
  expect(statuses).toEqual([200, 200]);
}

function transcribe(
  target: HangarUnderTest,
  audio: Buffer,
  options: { query?: string; headers?: Record<string, string>; type?: string } = {},
) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(audio)], { type: options.type ?? 'application/octet-stream' }), 'speech.bin');
  return httpRequest(target.url, 'POST', `/api/voice/transcriptions${options.query ?? ''}`, {
    rawBody: form as never,
    headers: options.headers ?? acme,
  });
}

beforeAll(async () => {
  mock = await startMockSpeech();
  await spokenAudio(SAID, { format: 'mp3', sampleRate: 22_050 });
  const tenancy = { Tenancy: { Enabled: true, AllowHeaderResolution: true } };
  eleven = await startHangar({
    modules: allInOneModules(),
    overrides: {
      ...tenancy,
      Voice: {
        Endpoint: mock.url,
        ApiKey: 'xi-test-key',
        DefaultVoiceId: 'rachel',
        SynthesisModelId: 'eleven_flash_v2_5',
        TranscriptionModelId: 'scribe_v1',
        MaxCharactersPerRequest: 200,
        MaxConcurrentRequests: 2,
        Timeout: '3s',
      },
      Attachments: { MaxBytes: 200_000 },
      Pricing: {
        Currency: 'EUR',
        Voice: {
          ElevenLabs: {
            eleven_flash_v2_5: { PerMillionCharacters: 50, PerMinute: null },
            scribe_v1: { PerMillionCharacters: null, PerMinute: 0.4 },
          },
        },
      },
    },
  });
  openai = await startHangar({
    modules: allInOneModules(),
    overrides: {
      ...tenancy,
      Providers: { speaker: { Kind: 'OpenAICompatible', Endpoint: mock.url, ApiKey: 'sk-voice' } },
      Voice: { Provider: 'speaker', OutputFormat: 'wav_22050', SynthesisModelId: 'tts-1', TranscriptionModelId: 'whisper-1' },
    },
  });
  off = await startHangar({ modules: allInOneModules(), overrides: tenancy });
});

afterAll(async () => {
  await Promise.all([eleven?.stop(), openai?.stop(), off?.stop()]);
  await mock?.close();
});

describe('speech through the ElevenLabs-style API', () => {
  it('speaks text as MP3 and hears it back as the same text, each priced and audited', async () => {
    const spoken = await speak(eleven, { text: 'hello from hangar' });
    expect(spoken.status, spoken.bytes.toString()).toBe(200);
    expect(spoken.headers.get('content-type')).toBe('audio/mpeg');
    expect(spoken.headers.get('x-hangar-characters')).toBe('17');
    expect(Number(spoken.headers.get('x-hangar-cost'))).toBeCloseTo((17 * 50) / 1_000_000, 12);
    expect(spoken.headers.get('x-hangar-currency')).toBe('EUR');
    // An MP3 frame (or its ID3 tag) opens the audio.
    expect(spoken.bytes.subarray(0, 3).toString('latin1') === 'ID3' || spoken.bytes[0] === 0xff).toBe(true);
    const sent = mock.requests.at(-1)!;
    expect(sent).toMatchObject({
      api: 'elevenlabs',
      path: '/v1/text-to-speech/rachel/stream',
      query: { output_format: 'mp3_44100_128' },
      json: { text: 'hello from hangar', model_id: 'eleven_flash_v2_5' },
    });
    expect(sent.headers['xi-api-key']).toBe('xi-test-key');

    const heard = await transcribe(eleven, spoken.bytes, { query: '?language=en' });
    expect(heard.status, heard.text).toBe(200);
    expect(heard.body).toMatchObject({
      text: 'hello from hangar',
      language: 'en',
      provider: 'ElevenLabs',
      model: 'scribe_v1',
      currency: 'EUR',
    });
    // espeak-ng says it in about 1.3 s; the MP3's own length is what is priced.
    expect(heard.body.durationSeconds).toBeGreaterThan(0.8);
    expect(heard.body.durationSeconds).toBeLessThan(3);
    expect(heard.body.cost).toBeCloseTo((heard.body.durationSeconds / 60) * 0.4, 12);
    expect(mock.requests.at(-1)).toMatchObject({
      api: 'elevenlabs',
      path: '/v1/speech-to-text',
      fields: { model_id: 'scribe_v1', language_code: 'en' },
      file: { type: 'audio/mpeg' },
    });

    const audit = await eleven.request('GET', '/api/audit?action=voice.synthesized', { headers: acme });
    expect(audit.body[0]).toMatchObject({
      action: 'voice.synthesized',
      details: { provider: 'ElevenLabs', voiceId: 'rachel', characters: 17 },
    });
    const transcribed = await eleven.request('GET', '/api/audit?action=voice.transcribed', { headers: acme });
    expect(transcribed.body[0].details).toMatchObject({ provider: 'ElevenLabs', cost: heard.body.cost });
    expect((await eleven.request('GET', '/api/audit?action=voice.synthesized', { headers: globex })).body).toEqual([]);
  });

  it('refuses text over Voice:MaxCharactersPerRequest, a bad voice, audio that is none and a bad language, calling no provider', async () => {
    const before = mock.requests.length;
    expectProblem(
      await eleven.request('POST', '/api/voice/speech', { body: { text: 'x'.repeat(201) }, headers: acme }),
      400,
      'validation_failed',
    );
    expectProblem(await eleven.request('POST', '/api/voice/speech', { body: { text: '   ' }, headers: acme }), 400, 'validation_failed');
    expectProblem(
      await eleven.request('POST', '/api/voice/speech', { body: { text: 'hi', voiceId: '../admin' }, headers: acme }),
      400,
      'validation_failed',
    );
    expectProblem(
      await eleven.request('POST', '/api/voice/speech', { body: { text: 'hi', pitch: 3 }, headers: acme }),
      400,
      'validation_failed',
    );
    expectProblem(await transcribe(eleven, Buffer.from('this is not audio at all, only text')), 415, 'unsupported_media_type');
    expectProblem(await transcribe(eleven, Buffer.alloc(0)), 400, 'validation_failed');
    const wav = await spokenAudio('one two three');
    expectProblem(await transcribe(eleven, wav, { query: '?language=English' }), 400, 'validation_failed');
    expectProblem(
      await eleven.request('POST', '/api/voice/transcriptions', { body: { audio: 'x' }, headers: acme }),
      415,
      'unsupported_media_type',
    );
    expect(mock.requests.length).toBe(before);
  });

  it('holds Voice:MaxConcurrentRequests calls at the provider and refuses one more with 429 until a slot frees', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    mock.script({ hold });
    mock.script({ hold });
    const audio = await spokenAudio('second');
    const before = mock.requests.length;
    const first = speak(eleven, { text: SAID });
    const second = transcribe(eleven, audio);
    await eventually(() => mock.requests.length === before + 2 || undefined, 'both calls reach the provider', 2_500);
    // The slots are shared by the run executors: with two of each (split shape, HANGAR_TEST_SPLIT_REPLICAS=2)
    // the last gateway calls the executor the first two calls did not reach.
    const third = await httpRequest(eleven.urls.at(-1)!, 'POST', '/api/voice/speech', { body: { text: 'third' }, headers: acme });
    expectProblem(third, 429, 'rate_limited');
    expect(mock.requests.length).toBe(before + 2);
    release();
    expect((await first).status).toBe(200);
    expect((await second).status).toBe(200);
    expect((await speak(eleven, { text: SAID })).status).toBe(200);
  });

  it('gives the slot back when the client goes away while the provider is still speaking', async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    mock.script({ hold });
    mock.script({ hold });
    const before = mock.requests.length;
    const leaving = [new AbortController(), new AbortController()];
    const left = leaving.map((client) =>
      fetch(`${eleven.url}/api/voice/speech`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...acme },
        body: JSON.stringify({ text: SAID }),
        signal: client.signal,
      }).catch((error: Error) => error.name),
    );
    await eventually(() => mock.requests.length === before + 2 || undefined, 'both calls reach the provider', 2_500);
    for (const client of leaving) client.abort();
    expect(await Promise.all(left)).toEqual(['AbortError', 'AbortError']);
    await bothSlotsFree();
    release();
  });

  it('gives the slot back when the client goes away after the first audio arrived', async () => {
    let release!: () => void;
    const rest = new Promise<void>((resolve) => (release = resolve));
    mock.script({ halfThenHold: rest });
    mock.script({ halfThenHold: rest });
    const listeners = [new AbortController(), new AbortController()];
    const firstBytes = await Promise.all(
      listeners.map(async (client) => {
        const response = await fetch(`${eleven.url}/api/voice/speech`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', ...acme },
          body: JSON.stringify({ text: SAID }),
          signal: client.signal,
        });
        const { value } = await response.body!.getReader().read();
        client.abort();
        return value?.length ?? 0;
      }),
    );
    expect(firstBytes.every((length) => length > 0)).toBe(true);
    await bothSlotsFree();
    release();
  });

  it('answers 503 problem+json, not a cut connection, when the provider stalls before its first byte of audio', async () => {
    mock.script({ headersThenHold: new Promise((resolve) => setTimeout(resolve, 6_000)) });
    expectProblem(await eleven.request('POST', '/api/voice/speech', { body: { text: 'stalls' }, headers: acme }), 503, 'provider_error');
  });

  it('refuses audio over Attachments:MaxBytes with 413 before calling the provider', async () => {
    const before = mock.requests.length;
    // Ten seconds of 16 kHz quiet: 320 kB, over the 200 kB this instance takes.
    const long = await silentWav(10);
    expectProblem(await transcribe(eleven, long), 413, 'payload_too_large');
    expect(mock.requests.length).toBe(before);
  });

  it('answers a provider failure 503, a refusal 400 and a provider slower than Voice:Timeout 503, each freeing its slot', async () => {
    mock.script({ status: 500 });
    expectProblem(await eleven.request('POST', '/api/voice/speech', { body: { text: 'fails' }, headers: acme }), 503, 'provider_error');
    mock.script({ status: 422 });
    expectProblem(await eleven.request('POST', '/api/voice/speech', { body: { text: 'refused' }, headers: acme }), 400, 'provider_refused');
    mock.script({ raw: '<html>gateway error</html>' });
    expectProblem(await transcribe(eleven, await spokenAudio('garbled')), 503, 'provider_error');
    mock.script({ hold: new Promise((resolve) => setTimeout(resolve, 6_000)) });
    const started = Date.now();
    expectProblem(await eleven.request('POST', '/api/voice/speech', { body: { text: 'slow' }, headers: acme }), 503, 'provider_error');
    expect(Date.now() - started).toBeLessThan(5_500);
    // Every failure gave its slot back: two calls at once still go through.
    const [a, b] = await Promise.all([speak(eleven, { text: SAID }), speak(eleven, { text: SAID })]);
    expect([a.status, b.status]).toEqual([200, 200]);
  });
});

describe('speech under quotas', () => {
  it('counts speech and transcriptions toward the tenant’s Cost rules for every agent, and refuses both once one is used up', async () => {
    const initech = { 'x-hangar-tenant': 'initech' };
    const rule = await eleven.request('PUT', '/api/quotas/speech', {
      body: { metric: 'Cost', period: 'Day', limit: 0.001 },
      headers: initech,
    });
    expect(rule.status, rule.text).toBe(201);
    const used = async () => ((await eleven.request('GET', '/api/quotas', { headers: initech })).body as any[])[0].used;
    // 17 characters at 50 per million: 0.00085 each, counted before the answer.
    const first = await speak(eleven, { text: SAID }, initech);
    expect(first.status).toBe(200);
    expect(await used()).toBeCloseTo(0.00085, 12);
    expect((await speak(eleven, { text: SAID }, initech)).status).toBe(200);
    expect(await used()).toBeCloseTo(0.0017, 12);

    const asked = mock.requests.length;
    const refused = await eleven.request('POST', '/api/voice/speech', { body: { text: SAID }, headers: initech });
    expectProblem(refused, 429, 'quota_exceeded');
    expect(refused.body).toMatchObject({ quota: 'speech', limit: 0.001 });
    expectProblem(await transcribe(eleven, first.bytes, { headers: initech }), 429, 'quota_exceeded');
    // A file that is no audio is still the caller's error first.
    expectProblem(await transcribe(eleven, Buffer.alloc(0), { headers: initech }), 400, 'validation_failed');
    expect(mock.requests).toHaveLength(asked);
    expect((await speak(eleven, { text: SAID })).status).toBe(200);
  });
});

describe('speech through OpenAI’s speech API (Voice:Provider)', () => {
  it('speaks in the configured format with the provider’s key and transcribes a WAV, unpriced without a price', async () => {
    const spoken = await speak(openai, { text: 'turn on the lights', voiceId: 'alloy' });
    expect(spoken.status, spoken.bytes.toString()).toBe(200);
    expect(spoken.headers.get('content-type')).toBe('audio/wav');
    expect(spoken.bytes.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(spoken.headers.get('x-hangar-cost')).toBeNull();
    const sent = mock.requests.at(-1)!;
    expect(sent).toMatchObject({
      api: 'openai',
      path: '/audio/speech',
      json: { model: 'tts-1', voice: 'alloy', input: 'turn on the lights', response_format: 'wav' },
    });
    expect(sent.headers.authorization).toBe('Bearer sk-voice');

    const wav = await spokenAudio('what time is it');
    mock.knows(wav, 'what time is it');
    const heard = await transcribe(openai, wav, { type: 'audio/wav' });
    expect(heard.status, heard.text).toBe(200);
    expect(heard.body).toMatchObject({ text: 'what time is it', language: null, provider: 'speaker', model: 'whisper-1', cost: null });
    expect(heard.body.durationSeconds).toBeGreaterThan(0.5);
    expect(mock.requests.at(-1)).toMatchObject({
      api: 'openai',
      path: '/audio/transcriptions',
      fields: { model: 'whisper-1', response_format: 'json' },
    });
  });

  it('needs a voice when the deployment has no Voice:DefaultVoiceId', async () => {
    expectProblem(await openai.request('POST', '/api/voice/speech', { body: { text: 'hello' }, headers: acme }), 400, 'validation_failed');
  });
});

describe('without a speech provider', () => {
  it('answers 404 on both routes', async () => {
    expectProblem(
      await off.request('POST', '/api/voice/speech', { body: { text: 'hello', voiceId: 'x' }, headers: acme }),
      404,
      'not_found',
    );
    expectProblem(await transcribe(off, await spokenAudio('hello')), 404, 'not_found');
  });
});
