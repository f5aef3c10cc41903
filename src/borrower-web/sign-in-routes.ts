import Router from '@koa/router';
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { InteractionDetails } from 'oidc-provider';
import { z } from 'zod';
import type { BorrowerWebDeps } from './deps.js';
import { isCimdClientId } from '../auth/oauth/cimd.js';
import { readJsonBody } from '../http/body.js';
import { mcpUrl } from '../config/env.js';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import { newId } from '@credit-facilitator/wire/ids';
import { parseScopeString } from '@credit-facilitator/wire/onboarding';
import { typedDataToJson } from '../domain/typed-data.js';
import { findOrCreateBorrowerByWallet } from '../store/borrowers.js';
import { errorPage, newNonce, sendHtml } from '../http/html.js';
import { signInPage } from './sign-in-page.js';
import { limitSignInsFrom, limitSignInsOf } from './sign-in-limit.js';
import { walletProofFor, walletProofProblem } from './wallet-proof.js';
import { parseQuery } from '../http/query.js';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const Uid = z.string().regex(/^[A-Za-z0-9_-]{10,64}$/);
const ChallengeQuery = z.object({ wallet: Address });
const WalletProofBody = z.strictObject({
  wallet: Address,
  signature: z.string().regex(/^0x[0-9a-fA-F]{2,1024}$/, 'must be 0x-prefixed hex'),
  issuedAt: z.number().int().nonnegative(),
});
const OIDC_SCOPES = new Set(['openid', 'offline_access']);

const EXPIRED = 'This sign-in has expired, was already used, or was started in another browser. Start again from your agent.';

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.invalidRequest(fieldIssues(r.error));
  return r.data;
}

/** The pending interaction named by the URL, read through the browser's interaction cookie. */
async function interactionFor(provider: Provider, ctx: Context): Promise<InteractionDetails | null> {
  if (!Uid.safeParse(ctx.params.uid).success) return null;
  try {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    return details.uid === ctx.params.uid ? details : null;
  } catch {
    return null;
  }
}

async function requireInteraction(provider: Provider, ctx: Context): Promise<InteractionDetails> {
  const details = await interactionFor(provider, ctx);
  if (!details) throw new ApiError('NOT_FOUND', EXPIRED);
  return details;
}

function clientIdOf(details: InteractionDetails): string {
  return String(details.params.client_id ?? '');
}

function resourcesOf(details: InteractionDetails, fallback: string): string[] {
  const r = details.params.resource;
  const list = (Array.isArray(r) ? r : [r]).filter((x): x is string => typeof x === 'string' && x !== '');
  return list.length ? list : [fallback];
}

/** The borrower sign-in of the OAuth authorization flow (oidc-provider's interaction): a wallet proves control by signing WalletProof. */
export function signInRouter(deps: BorrowerWebDeps, provider: Provider): Router {
  const router = new Router({ prefix: '/oauth/interaction/:uid' });

  router.get('/', async (ctx) => {
    const details = await interactionFor(provider, ctx);
    if (!details) return sendHtml(ctx, errorPage('Sign-in expired', EXPIRED), null, 400);
    const client = await provider.Client.find(clientIdOf(details)).catch(() => undefined);
    if (!client) return sendHtml(ctx, errorPage('Unknown agent', 'The agent that started this sign-in is not registered here, or its metadata document can no longer be read.'), null, 400);
    const redirectUri = URL.parse(String(details.params.redirect_uri ?? ''));
    const nonce = newNonce();
    const html = signInPage(
      {
        uid: details.uid,
        clientId: client.clientId,
        clientName: client.clientName ?? 'An unnamed agent',
        ...(isCimdClientId(client.clientId) ? { documentHost: new URL(client.clientId).host } : {}),
        redirectHost: redirectUri?.host ?? 'unknown',
        scopes: parseScopeString(details.params.scope),
        chainId: deps.env.CHAIN_ID,
      },
      nonce,
    );
    sendHtml(ctx, html, nonce);
  });

  router.get('/challenge', async (ctx) => {
    const details = await requireInteraction(provider, ctx);
    const { wallet } = parseQuery(ChallengeQuery, ctx.query);
    const issuedAt = Math.floor(deps.nowMs() / 1000);
    const td = walletProofFor(deps, { wallet: wallet as `0x${string}`, clientId: clientIdOf(details), challenge: details.uid, issuedAt });
    ctx.body = { typed_data: typedDataToJson(td), issued_at: issuedAt };
  });

  router.post('/wallet-proof', async (ctx) => {
    const details = await requireInteraction(provider, ctx);
    await limitSignInsFrom(deps, ctx);
    const body = parse(WalletProofBody, await readJsonBody(ctx));
    const clientId = clientIdOf(details);
    const wallet = body.wallet.toLowerCase() as `0x${string}`;
    const problem = await walletProofProblem(
      deps,
      { wallet, clientId, challenge: details.uid, issuedAt: body.issuedAt },
      body.signature as `0x${string}`,
    );
    if (problem) throw new ApiError('INVALID_REQUEST', problem);
    await limitSignInsOf(deps, wallet);

    const rawScopes = String(details.params.scope ?? '').split(' ').filter(Boolean);
    const scopes = parseScopeString(details.params.scope);
    if (scopes.length === 0) {
      throw new ApiError('INVALID_REQUEST', 'The agent requested no scope this service offers, so there is nothing to grant. Ask the agent to request at least borrower:token.');
    }
    const borrower = await findOrCreateBorrowerByWallet(deps.store.c, wallet, newId(), new Date(deps.nowMs()));

    // The grant holds every requested known scope; each access token is cut down to the stage's.
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === borrower._id ? existing : new provider.Grant({ accountId: borrower._id, clientId });
    for (const resource of resourcesOf(details, mcpUrl(deps.env))) grant.addResourceScope(resource, scopes.join(' '));
    // oidc-provider treats every listed scope as an OP scope too; its consent check wants them granted.
    grant.addOIDCScope([...rawScopes.filter((s) => OIDC_SCOPES.has(s)), ...scopes].join(' '));
    const grantId = await grant.save();

    const redirectTo = await provider.interactionResult(
      ctx.req,
      ctx.res,
      { login: { accountId: borrower._id }, consent: { grantId } },
      { mergeWithLastSubmission: false },
    );
    deps.logger.info('borrower signed in', { borrowerId: borrower._id, clientId });
    ctx.body = { redirectTo };
  });

  router.post('/abort', async (ctx) => {
    await requireInteraction(provider, ctx);
    const redirectTo = await provider.interactionResult(
      ctx.req,
      ctx.res,
      { error: 'access_denied', error_description: 'The borrower cancelled the sign-in.' },
      { mergeWithLastSubmission: false },
    );
    ctx.body = { redirectTo };
  });

  return router;
}
