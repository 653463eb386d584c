import { dropSchemas, spawnAllInOne, spokenAudio, startMockOpenAI, startMockSpeech, TEST_TOKEN } from '@hangar/testing';
import WebSocket from 'ws';
import { benchEngines } from './engines.js';

/**
 * Voice turn latency: from the end of an utterance (the client's commit) to the first byte of
 * speech back, over the conversation WebSocket of Hangar all-in-one in its own process (PGlite, or
 * BENCH_ENGINES=real PostgreSQL, Redis and Kafka), against the mock speech API (transcripts and
 * speech over real HTTP, its MP3 cached per text) and the mock model. Each turn is one
 * transcription, one run of kind Voice in the conversation's session and one speech call.
 *
 *   BENCH_ENGINES=real  BENCH_SAMPLES=50
 */
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 50);
const [speech, models] = await Promise.all([startMockSpeech(), startMockOpenAI()]);
models.script('voice', () => ({ text: 'It is sunny and mild today.', usage: { prompt: 30, completion: 8 } }));
const engines = benchEngines();
const hangar = await spawnAllInOne({
  env: {
    HANGAR__Providers__mock__Kind: 'OpenAICompatible',
    HANGAR__Providers__mock__Endpoint: models.url,
    HANGAR__Voice__Endpoint: speech.url,
    HANGAR__Voice__DefaultVoiceId: 'bench',
    HANGAR__Voice__SynthesisModelId: 'eleven_flash_v2_5',
    HANGAR__Voice__TranscriptionModelId: 'scribe_v1',
    ...engines.env,
  },
});
console.log(`shape: all-in-one; engines: ${engines.name}; ${SAMPLES} turns of one conversation`);

const percentile = (values: number[], share: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * share))];

try {
  const created = await fetch(`${hangar.url}/api/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'weather', model: { provider: 'mock', model: 'voice' } }),
  });
  if (created.status !== 201) throw new Error(`agent: ${created.status} ${await created.text()}`);
  const utterance = await spokenAudio('what is the weather like today', { format: 'pcm' });
  speech.hears(utterance, 'what is the weather like today');

  const socket = new WebSocket(`${hangar.url.replace(/^http/, 'ws')}/api/voice/conversations/weather`, {
    headers: { authorization: `Bearer ${TEST_TOKEN}` },
  });
  let onFrame: ((binary: boolean, data: Buffer) => void) | undefined;
  socket.on('message', (data: Buffer, binary: boolean) => onFrame?.(binary, data));
  await new Promise<void>((resolve, reject) => {
    onFrame = (binary, data) => !binary && JSON.parse(data.toString()).type === 'ready' && resolve();
    socket.once('close', (code, reason) => reject(new Error(`closed ${code} ${reason}`)));
  });

  /** One turn: the utterance, its commit, then the time to the first audio frame and to the turn's end. */
  const turn = () =>
    new Promise<{ firstAudio: number; serverFirstAudio: number }>((resolve, reject) => {
      let firstAudio: number | undefined;
      socket.send(utterance);
      const committed = performance.now();
      onFrame = (binary, data) => {
        if (binary) firstAudio ??= performance.now() - committed;
        else {
          const frame = JSON.parse(data.toString());
          if (frame.type === 'error') reject(new Error(`turn failed: ${frame.detail}`));
          if (frame.type === 'turn_end') resolve({ firstAudio: firstAudio!, serverFirstAudio: frame.firstAudioMs });
        }
      };
      socket.send(JSON.stringify({ type: 'commit' }));
    });

  await turn(); // warm-up: the mock makes and caches its MP3
  const turns = [];
  for (let index = 0; index < SAMPLES; index++) turns.push(await turn());
  const client = turns.map((measured) => measured.firstAudio);
  const server = turns.map((measured) => measured.serverFirstAudio);
  console.log(
    `end of utterance → first audio byte at the client: ${percentile(client, 0.5).toFixed(1)} ms p50, ${percentile(client, 0.99).toFixed(1)} ms p99`,
  );
  console.log(
    `the same measured in the run executor (turn_end firstAudioMs): ${percentile(server, 0.5).toFixed(1)} ms p50, ${percentile(server, 0.99).toFixed(1)} ms p99`,
  );
  socket.close();
} finally {
  await hangar.stop();
  await Promise.all([speech.close(), models.close()]);
  if (engines.real) await dropSchemas(engines.schemaPrefix);
}
