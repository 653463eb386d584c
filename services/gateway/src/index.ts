export { gatewayModule } from './gateway.module.js';
export { gatewayRoutes } from './gateway.app.js';
export { buildOpenApiDocument } from './http/openapi.js';
export { isLoopback } from './http/auth.js';
export { abortedRequestCount } from './http/problem.js';
