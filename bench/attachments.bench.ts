import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { startDistributed, TEST_TOKEN } from '@hangar/testing';

/**
 * Upload and download throughput of a 20 MiB file through the gateway, and the gateway's memory
 * during 10 concurrent 20 MiB uploads. Distributed shape on PostgreSQL, so the gateway is its own process.
 */
const MIB = 1024 * 1024;
const SIZE = 20 * MIB;
const ROUNDS = 3;
const CONCURRENT = 10;
const auth = { authorization: `Bearer ${TEST_TOKEN}` };

/** The gateway's node process (tsx runs the entry in a child of the pid we spawned). */
function nodeProcessOf(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  return children.length ? nodeProcessOf(children[0]) : pid;
}
const memoryKiB = (pid: number, field: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]);

const file = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(SIZE - 9)]);
const digest = createHash('sha256').update(file).digest('hex');

async function upload(): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([file]), 'big.pdf');
  const response = await fetch(`${hangar.url}/api/attachments`, { method: 'POST', headers: auth, body: form });
  const body = (await response.json()) as { id: string; sha256: string };
  if (response.status !== 201 || body.sha256 !== digest) throw new Error(`upload failed: ${response.status} ${JSON.stringify(body)}`);
  return body.id;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mibPerSecond = (ms: number) => SIZE / MIB / (ms / 1000);

const hangar = await startDistributed();
try {
  const gateway = nodeProcessOf(hangar.processes.get('Gateway')!.pid!);
  const uploads: number[] = [];
  const downloads: number[] = [];
  let id = '';
  for (let round = 0; round < ROUNDS; round += 1) {
    let started = performance.now();
    id = await upload();
    uploads.push(performance.now() - started);
    started = performance.now();
    const response = await fetch(`${hangar.url}/api/attachments/${id}`, { headers: auth });
    const bytes = Buffer.from(await response.arrayBuffer());
    downloads.push(performance.now() - started);
    if (createHash('sha256').update(bytes).digest('hex') !== digest) throw new Error('download differs from upload');
  }
  console.log(
    `20 MiB upload: median ${mibPerSecond(median(uploads)).toFixed(1)} MiB/s (${uploads.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
  );
  console.log(
    `20 MiB download: median ${mibPerSecond(median(downloads)).toFixed(1)} MiB/s (${downloads.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
  );

  const baseline = memoryKiB(gateway, 'VmRSS');
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryKiB(gateway, 'VmRSS'))), 10);
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENT }, upload));
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  console.log(
    `${CONCURRENT} concurrent 20 MiB uploads: ${elapsed.toFixed(0)} ms (${((CONCURRENT * SIZE) / MIB / (elapsed / 1000)).toFixed(1)} MiB/s aggregate); ` +
      `gateway RSS ${(baseline / 1024).toFixed(0)} MiB before, peak ${(peak / 1024).toFixed(0)} MiB sampled every 10 ms ` +
      `(+${((peak - baseline) / 1024).toFixed(0)} MiB; ${CONCURRENT * 20} MiB were in flight), process high-water mark ${(memoryKiB(gateway, 'VmHWM') / 1024).toFixed(0)} MiB`,
  );
} finally {
  await hangar.cleanup();
}
