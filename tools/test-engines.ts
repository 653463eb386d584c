import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';

/**
 * Vitest global setup. PostgreSQL and Redis are services of the machine; Kafka is not, so when no
 * broker answers at HANGAR_TEST_KAFKA_BROKERS (default 127.0.0.1:9092) the local single-node broker
 * is started with deploy/local/kafka.sh (jars from Maven Central) and stopped after the run.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = `${ROOT}deploy/local/kafka.sh`;

const listening = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port, timeout: 1000 });
    const answer = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => answer(true));
    socket.once('error', () => answer(false));
    socket.once('timeout', () => answer(false));
  });

export default async function setup() {
  const configured = process.env.HANGAR_TEST_KAFKA_BROKERS;
  const [host, port] = (configured?.split(',')[0] ?? '127.0.0.1:9092').split(':');
  if (await listening(host, Number(port))) return;
  if (configured) throw new Error(`no Kafka broker answers at ${configured} (HANGAR_TEST_KAFKA_BROKERS)`);
  execFileSync('bash', [SCRIPT, 'start'], { stdio: 'inherit' });
  return () => execFileSync('bash', [SCRIPT, 'stop'], { stdio: 'inherit' });
}
