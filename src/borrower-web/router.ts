import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { BorrowerWebDeps } from './deps.js';
import { accountRouter } from './account-routes.js';
import { signInRouter } from './sign-in-routes.js';
import { signingRouter } from './signing-routes.js';

/** The borrower-facing pages: OAuth sign-in (/oauth/interaction/:uid), signing links and the borrower's own page (/borrower/...). */
export function borrowerWebRoutes(deps: BorrowerWebDeps, provider: Provider): Middleware {
  // Router middleware declares its own context type; the app hands it a plain Koa context.
  const signIn = signInRouter(deps, provider).routes() as unknown as Middleware;
  const signing = signingRouter(deps).routes() as unknown as Middleware;
  const account = accountRouter(deps).routes() as unknown as Middleware;
  return (ctx, next) => signIn(ctx, () => signing(ctx, () => account(ctx, next)));
}
