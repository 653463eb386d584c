import type { AddressInfo } from 'node:net';
import { createLogger, HangarError } from '@hangar/platform';
import express from 'express';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PROBLEM_CONTENT_TYPE, problemHandler } from '../src/http/problem.js';

/** The gateway's last middleware: an engine that cannot be reached is a 503, a bug a 500 that shows nothing. */

let server: ReturnType<express.Express['listen']>;
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
  app.use(problemHandler(createLogger({ name: 'problem-test', level: 'silent' })));
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
