import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Router from '@koa/router';
import { Registry } from 'prom-client';
import { facilitatorRouter } from '../../src/api/facilitator/routes.js';
import { metricsRouter } from '../../src/http/metrics-route.js';
import { openApiRouter } from '../../src/api/openapi.js';
import { createOAuthProvider } from '../../src/auth/oauth/provider.js';
import { projectRoot } from '../../src/config/paths.js';
import { accountRouter } from '../../src/borrower-web/account-routes.js';
import { signInRouter } from '../../src/borrower-web/sign-in-routes.js';
import { signingRouter } from '../../src/borrower-web/signing-routes.js';
import { mcpRouter } from '../../src/mcp/routes.js';
import { accountRouter as consoleAccountRouter } from '../../src/merchant-web/account-routes.js';
import type { MerchantWebDeps } from '../../src/merchant-web/deps.js';
import { paymentRouter as consolePaymentRouter } from '../../src/merchant-web/payment-routes.js';
import { signInRouter as consoleSignInRouter } from '../../src/merchant-web/sign-in-routes.js';
import { webhookRouter as consoleWebhookRouter } from '../../src/merchant-web/webhook-routes.js';
import { agentDeps } from './onboarding.js';
import type { World } from './world.js';

/** `METHOD path` for every route a router declares; `ANY` for a route taking every method. */
function routesOf(router: Router): string[] {
  return router.stack.flatMap((layer) => {
    const methods = layer.methods.filter((m) => m !== 'HEAD');
    if (methods.length > 8) return [`ANY ${String(layer.path)}`];
    return methods.map((m) => `${m} ${String(layer.path)}`);
  });
}

/** Every route the API app mounts through its routers (src/main/api-app.ts), built from the real router factories. */
export async function mountedRoutes(w: World): Promise<string[]> {
  const deps = await agentDeps(w);
  const routers = [
    facilitatorRouter(deps),
    openApiRouter(deps.env),
    metricsRouter(new Registry(), undefined),
    mcpRouter(deps),
    signInRouter(deps, createOAuthProvider(deps)),
    signingRouter(deps),
    accountRouter(deps),
    // The merchant console's routers only keep their deps for requests: listing them needs none of the console's own.
    ...[consoleSignInRouter, consolePaymentRouter, consoleWebhookRouter, consoleAccountRouter].map((r) => r(deps as unknown as MerchantWebDeps)),
  ];
  return [...new Set(routers.flatMap(routesOf))].sort();
}

/** The API's router modules mountedRoutes() builds; the demo merchant is its own app. */
export const API_ROUTER_MODULES = [
  'src/api/facilitator/routes.ts',
  'src/api/openapi.ts',
  'src/borrower-web/account-routes.ts',
  'src/borrower-web/sign-in-routes.ts',
  'src/borrower-web/signing-routes.ts',
  'src/http/metrics-route.ts',
  'src/mcp/routes.ts',
  'src/merchant-web/account-routes.ts',
  'src/merchant-web/payment-routes.ts',
  'src/merchant-web/sign-in-routes.ts',
  'src/merchant-web/webhook-routes.ts',
];

/** Source files under src/ that build a @koa/router Router, so a new router module cannot go unnoticed. */
export function routerModulesInSource(): string[] {
  const root = projectRoot();
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(`${dir}/${e.name}`) : e.name.endsWith('.ts') ? [`${dir}/${e.name}`] : []));
  return walk('src')
    .filter((f) => readFileSync(join(root, f), 'utf8').includes('new Router('))
    .sort();
}
