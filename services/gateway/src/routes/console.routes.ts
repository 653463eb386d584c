import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { CONSOLE_DIRECTORY } from '@hangar/console';
import { HangarError, notFound } from '@hangar/platform';
import { problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Console';
/** The files Vite emits under assets/: a name with its content hash, never a path. */
const ASSET_FILE = /^[\w-]+(?:\.[\w-]+)*\.(js|css|svg|png|woff2)$/;
const ASSET_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
};
/** An origin as a Content-Security-Policy source: a scheme, a host and maybe a port, nothing that could end the directive. */
const FRAMING_ORIGIN = /^https?:\/\/[\w.-]+(?::\d+)?$/;

/**
 * The page calls only this origin's API; nothing inline, nothing from elsewhere. It may be framed
 * only by Hangar:Api:AllowedOrigins (a team's portal that embeds it), by no page when that is empty.
 */
export function consoleContentSecurityPolicy(allowedOrigins: readonly string[]): string {
  const framers = allowedOrigins.includes('*') ? ['*'] : allowedOrigins.filter((origin) => FRAMING_ORIGIN.test(origin));
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    `frame-ancestors ${framers.length > 0 ? framers.join(' ') : "'none'"}`,
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

const notBuilt = () =>
  new HangarError('unavailable', 'the console is not built here: run `npm run build:console` (npm install does)', {}, 'console_not_built');

const escapeAttribute = (value: string) =>
  value.replace(/[&"<>]/g, (character) => ({ '&': '&amp;', '"': '&quot;', '<': '&lt;', '>': '&gt;' })[character]!);

let page: Promise<string> | undefined;
/** The built page, read once: its prefix and asset addresses are filled in per gateway (they depend on Hangar:Api:Prefix). */
function builtPage(): Promise<string> {
  page ??= readFile(join(CONSOLE_DIRECTORY, 'index.html'), 'utf8').catch((error: NodeJS.ErrnoException) => {
    page = undefined;
    throw error.code === 'ENOENT' ? notBuilt() : error;
  });
  return page;
}

/** The web console (API.md "Console"): one page and its assets; it calls the public API with the credential it asks for. */
export const consoleRoutes = [
  defineRoute({
    method: 'get',
    path: '/console',
    operationId: 'getConsole',
    summary: 'The web console',
    description:
      'The console’s page (HTML). Loading it needs no credential: it asks for a bearer token or an API key, keeps it in session storage, and calls this API with it. Its pages are addressed by the URL’s hash (#/runs/<id>).',
    tag: TAG,
    auth: 'none',
    responses: {
      200: { description: 'The page', contentType: 'text/html', schema: z.string() },
      503: problemResponse('The console is not built on this installation'),
    },
    async handler({ response }, { config }) {
      const prefix = config.Hangar.Api.Prefix;
      const html = (await builtPage())
        .replace('<meta name="hangar-api-prefix" content="" />', `<meta name="hangar-api-prefix" content="${escapeAttribute(prefix)}" />`)
        .replaceAll('"./assets/', `"${escapeAttribute(prefix)}/console/assets/`);
      response
        .status(200)
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-cache',
          'Content-Security-Policy': consoleContentSecurityPolicy(config.Hangar.Api.AllowedOrigins),
          'X-Content-Type-Options': 'nosniff',
          'Referrer-Policy': 'no-referrer',
        })
        .send(html);
      return { status: 200, sent: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/console/assets/{file}',
    operationId: 'getConsoleAsset',
    summary: 'A file of the web console',
    description: 'A script, style sheet or image of the console. Its name holds a hash of its content, so it is cached for a year.',
    tag: TAG,
    auth: 'none',
    params: z.object({ file: z.string().describe('The file’s name, as the page names it') }),
    responses: {
      200: { description: 'The file', contentType: 'application/octet-stream', schema: z.string() },
      404: problemResponse('No such file'),
      503: problemResponse('The console is not built on this installation'),
    },
    async handler({ params, response }) {
      const type = ASSET_FILE.exec(params.file)?.[1];
      if (!type) throw notFound(`the console has no file "${params.file}"`);
      const bytes = await readFile(join(CONSOLE_DIRECTORY, 'assets', params.file)).catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
        await builtPage(); // 503 when nothing is built, 404 for a file that is not part of it
        throw notFound(`the console has no file "${params.file}"`);
      });
      response
        .status(200)
        .set({
          'Content-Type': ASSET_TYPES[type],
          'Cache-Control': 'public, max-age=31536000, immutable',
          'X-Content-Type-Options': 'nosniff',
        })
        .send(bytes);
      return { status: 200, sent: true };
    },
  }),
];
