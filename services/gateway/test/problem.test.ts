import type { AddressInfo } from 'node:net';
import { createLogger, HangarError } from '@hangar/platform';
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROBLEM_CONTENT_TYPE, problemHandler } from '../src/http/problem.js';

/** The gateway's last middleware: an engine that cannot be reached is a 503, a bug a 500 that shows nothing. */

let server: ReturnType<express.Express['listen']>;
const logged: string[] = [];
const logger = Object.assign(createLogger({ name: 'problem-test', level: 'silent' }), {
  error: (_object: unknown, message: string) => logged.push(`error: ${message}`),
  debug: (_object: unknown, message: string) => logged.push(`debug: ${message}`),
});
let url: string;

beforeAll(async () => {
  const app = express();
  const failWith = (error: unknown) => () => {
    throw error;
  };
  app.get('/refused', failWith(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })));
  app.get('/terminated', failWith(new Error('Connection terminated unexpectedly')));
  app.get('/shutdown', failWith(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })));
  app.get('/not-found', failWith(new HangarError('notFound', 'no such agent')));
  app.get('/bug', failWith(new TypeError("Cannot read properties of undefined (reading 'id')")));
  // A call the route's signal stopped because the client hung up (as a gRPC call's AbortError).
  app.get('/left', async (request) => {
    await new Promise((resolve) => request.socket.once('close', resolve));
    throw Object.assign(new Error('The operation has been aborted'), { name: 'AbortError' });
  });
  app.use(problemHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server?.close(resolve)));

it.each(['/refused', '/terminated', '/shutdown'])('%s: a connection-class engine failure is 503 problem+json', async (path) => {
  const response = await fetch(url + path);
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toContain(PROBLEM_CONTENT_TYPE);
  const body = (await response.json()) as { detail: string };
  expect(body).toMatchObject({ status: 503, errorType: 'service_unavailable', title: 'Service Unavailable' });
  expect(body.detail).not.toMatch(/ECONNREFUSED|5432|administrator|terminated/);
});

it('keeps a HangarError as it is and an unknown error a 500', async () => {
  expect((await fetch(`${url}/not-found`)).status).toBe(404);
  const bug = await fetch(`${url}/bug`);
  expect(bug.status).toBe(500);
  expect(await bug.json()).toMatchObject({ errorType: 'internal_error' });
});

it('takes a call stopped because its client left for no server error', async () => {
  logged.length = 0;
  const client = new AbortController();
  const answered = fetch(`${url}/left`, { signal: client.signal }).catch((error: Error) => error.name);
  setTimeout(() => client.abort(), 50);
  expect(await answered).toBe('AbortError');
  await expect.poll(() => logged).toContain('debug: request stopped: the client left');
  expect(logged.filter((line) => line.startsWith('error'))).toEqual([]);
});
