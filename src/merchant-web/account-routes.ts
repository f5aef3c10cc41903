import Router from '@koa/router';
import { defaultRatePolicy } from '../auth/merchant-limits.js';
import { PERMISSIONS, type MerchantPrincipal } from '../auth/permissions.js';
import { listApiKeys } from '../store/merchants.js';
import { accountPage, type AccountView } from './account-page.js';
import { pageCaller } from './console-auth.js';
import type { MerchantWebDeps } from './deps.js';
import { sendPage } from './layout.js';

function limits(deps: MerchantWebDeps, p: MerchantPrincipal): AccountView['limits'] {
  const one = (bucket: 'verify' | 'capture') => {
    const own = p.rateLimits?.[bucket];
    return { ...(own ?? defaultRatePolicy(deps.env, bucket)), source: own ? 'your operator' : 'default' };
  };
  return { verify: one('verify'), capture: one('capture') };
}

/** The account page: GET /facilitator/me's facts, and the merchant's API keys with their last use. */
export function accountRouter(deps: MerchantWebDeps): Router {
  const router = new Router({ prefix: '/merchant' });
  router.get('/account', async (ctx) => {
    const caller = await pageCaller(deps, ctx, PERMISSIONS.settleRead);
    const keys = (await listApiKeys(deps.store.c, caller.principal.merchantId)).map((k) => ({
      keyId: k.keyId,
      prefix: k.prefix,
      createdAt: k.createdAt.toISOString(),
      ...(k.lastUsedAt ? { lastUsedAt: k.lastUsedAt.toISOString() } : {}),
      ...(k.revokedAt ? { revokedAt: k.revokedAt.toISOString() } : {}),
    }));
    sendPage(ctx, accountPage(caller, { limits: limits(deps, caller.principal), keys }));
  });
  return router;
}
