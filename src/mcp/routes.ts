import Router from '@koa/router';
import type { McpDeps } from './deps.js';
import { mcpEndpoint } from './endpoint.js';
import { PRM_PATHS, protectedResourceMetadata } from './metadata.js';
import { mcpOriginGuard } from './origin-guard.js';

/** `/mcp` (every method; only POST is served; a foreign Origin is refused first) and the RFC 9728 documents. */
export function mcpRouter(deps: McpDeps): Router {
  const router = new Router();
  const metadata = protectedResourceMetadata(deps.env);
  for (const path of PRM_PATHS) {
    router.get(path, (ctx) => {
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = metadata;
    });
  }
  router.all('/mcp', mcpOriginGuard(deps.env), mcpEndpoint(deps));
  return router;
}
