/**
 * Writes libs/client/src/generated/ from the gateway's live route list (`npm run client:generate`):
 * openapi.ts, openapi-typescript's types of the OpenAPI document the gateway serves, and
 * operations.ts, the client's route groups. `npm run proto:check` fails when the committed files differ.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import { buildOpenApiDocument, gatewayRoutes } from '@hangar/gateway';
import { GENERATED_HEADER, renderOperations, type OperationDescriptor } from '../libs/client/src/codegen/render-operations.js';

type Route = ReturnType<typeof gatewayRoutes>[number];

const GENERATED_DIR = new URL('../libs/client/src/generated/', import.meta.url);

function describeRoute(route: Route): OperationDescriptor {
  const successes = Object.entries(route.responses)
    .filter(([status]) => Number(status) >= 200 && Number(status) < 300)
    .map(([, response]) => response);
  const isJson = (contentType: string | undefined) => contentType === undefined || contentType.includes('json');
  const response = successes.some((answer) => answer.schema && isJson(answer.contentType))
    ? 'json'
    : successes.some((answer) => answer.schema)
      ? 'binary'
      : 'none';
  const body =
    route.body || route.rawBody
      ? 'json'
      : route.documentedBody
        ? route.documentedBody.contentType === 'multipart/form-data'
          ? 'form'
          : 'raw'
        : 'none';
  return {
    operationId: route.operationId,
    tag: route.tag,
    method: route.method,
    path: route.path,
    summary: route.summary,
    hasQuery: route.query !== undefined,
    body,
    response,
    // As the gateway decides (route.ts): only a POST with a JSON body is replayed for its key.
    idempotent: route.method === 'post' && body === 'json',
  };
}

const routes = gatewayRoutes();
// Prefix '' and a fixed version: the client adds Hangar:Api:Prefix at run time, and the output must not depend on the build.
const document = buildOpenApiDocument(routes, { prefix: '', version: 'generated' });
const types = astToString(await openapiTS(document as unknown as OpenAPI3));
await mkdir(GENERATED_DIR, { recursive: true });
await writeFile(new URL('openapi.ts', GENERATED_DIR), `${GENERATED_HEADER}\n${types}`);
await writeFile(new URL('operations.ts', GENERATED_DIR), renderOperations(routes.map(describeRoute)));
console.log(`client: generated from ${routes.length} routes`);
