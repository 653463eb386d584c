import { eventually, spawnAllInOne } from '@hangar/testing';
import { describe, expect, it } from 'vitest';

/** `npm start` on a terminal prints readable lines and a banner; off a terminal (CI, tests) it stays JSON. */
describe('logs of the all-in-one process', () => {
  it('are JSON lines when stdout is not a terminal', async () => {
    const hangar = await spawnAllInOne({ env: { HANGAR__Logging__Level: 'info' } });
    try {
      await eventually(() => hangar.output().includes('Hangar is serving') || undefined, 'the serving line');
      const lines = hangar.output().trim().split('\n');
      const serving = lines
        .filter((line) => line.startsWith('{"level"')) // the first line kept may be cut
        .map((line) => JSON.parse(line))
        .find((line) => line.msg.startsWith('Hangar is serving'));
      expect(serving).toMatchObject({ level: 30, stores: { sql: 'pglite', events: 'memory', cache: 'memory' } });
    } finally {
      await hangar.stop();
    }
  });

  it('are readable lines under a banner with Logging:Format pretty', async () => {
    const hangar = await spawnAllInOne({ env: { HANGAR__Logging__Level: 'info', HANGAR__Logging__Format: 'pretty' } });
    try {
      await eventually(() => hangar.output().includes('Stores') || undefined, 'the banner');
      const output = hangar.output();
      expect(output).toContain(`Hangar is serving ${hangar.url}`);
      expect(output).toContain('Stores        sql pglite, events memory, pub/sub memory');
      expect(output).toMatch(/INFO.*hangar all-in-one started/);
      expect(output.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    } finally {
      await hangar.stop();
    }
  });
});
