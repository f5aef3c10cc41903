import { randomBytes } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { BorrowerWebDeps } from './deps.js';
import { readJsonBody } from '../http/body.js';
import { AmountString } from '@credit-facilitator/wire/amounts';
import { fieldIssues } from '@credit-facilitator/wire/envelope';
import { ApiError } from '../domain/errors.js';
import { typedDataToJson } from '../domain/typed-data.js';
import { UuidString } from '@credit-facilitator/wire/voucher';
import { findBorrowerByWallet } from '../store/borrowers.js';
import { disconnectClient, lowerLimit, lowerLimitTypedData, revokeAgent, revokeKey } from './account-actions.js';
import { accountPage } from './account-page.js';
import { accountView } from './account-view.js';
import { newNonce, sendHtml } from '../http/html.js';
import { requireSameOrigin, requireSession, requireSessionPost } from './page-guard.js';
import { endSession, issueChallenge, spendChallenge, startSession, takeChallenge } from './session.js';
import { limitSignInsFrom, limitSignInsOf } from './sign-in-limit.js';
import { walletProofFor, walletProofProblem } from './wallet-proof.js';
import { parseQuery } from '../http/query.js';

/** The WalletProof's clientId on the borrower page: no OAuth client, the borrower themself. */
export const ACCOUNT_CLIENT_ID = 'borrower-account-page';

const CHALLENGE_UNUSABLE = 'This sign-in was not started in this browser for that wallet, was already used, or expired; press "Sign in" again.';

const Address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const Signature = z.string().regex(/^0x[0-9a-fA-F]{2,1024}$/, 'must be 0x-prefixed hex');
const ChallengeQuery = z.object({ wallet: Address });
const SignInBody = z.strictObject({ wallet: Address, signature: Signature, issuedAt: z.number().int().nonnegative() });
const EmptyBody = z.strictObject({});
/** An OAuth client id: a DCR id or a metadata document's https URL (cimd.ts caps those at 2048). */
const DisconnectBody = z.strictObject({ client_id: z.string().min(1).max(2048) });
const Limits = z
  .strictObject({ per_payment_limit: AmountString, daily_limit: AmountString })
  .refine((v) => !AmountString.safeParse(v.per_payment_limit).success || !AmountString.safeParse(v.daily_limit).success || BigInt(v.per_payment_limit) <= BigInt(v.daily_limit), {
    message: 'per_payment_limit must not exceed daily_limit',
    path: ['per_payment_limit'],
  });
const SignedLimits = z.strictObject({
  per_payment_limit: AmountString,
  daily_limit: AmountString,
  nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be the 32-byte hex nonce of the typed data'),
  signature: Signature,
});

function parse<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.invalidRequest(fieldIssues(r.error));
  return r.data;
}

/** A path id: a malformed one is as unknown as a foreign one. */
function pathId(ctx: Context, what: string): string {
  const r = UuidString.safeParse(ctx.params.id);
  if (!r.success) throw ApiError.notFound(what);
  return r.data;
}

async function jsonBody<T extends z.ZodType>(ctx: Context, schema: T): Promise<z.output<T>> {
  const raw = ctx.get('content-length') === '0' || !ctx.request.length ? {} : await readJsonBody(ctx);
  return parse(schema, raw);
}

/**
 * The borrower's own page (/borrower/account) and its JSON API: wallet sign-in (WalletProof bound
 * to our origin), then their operational agents, keys, limits, spend, holds, credit and payments,
 * with kill switches for a key, a whole agent or a connected OAuth client, and a wallet-signed
 * AgentGrant to lower a limit.
 */
export function accountRouter(deps: BorrowerWebDeps): Router {
  const router = new Router({ prefix: '/borrower' });

  router.get('/account', (ctx) => {
    const nonce = newNonce();
    sendHtml(ctx, accountPage(deps.env.CHAIN_ID, nonce), nonce);
  });

  router.get('/api/session/challenge', async (ctx) => {
    const { wallet } = parseQuery(ChallengeQuery, ctx.query);
    const address = wallet.toLowerCase() as `0x${string}`;
    const issuedAt = Math.floor(deps.nowMs() / 1000);
    const challenge = randomBytes(16).toString('base64url');
    await issueChallenge(deps, ctx, { wallet: address, challenge, issuedAt });
    const td = walletProofFor(deps, { wallet: address, clientId: ACCOUNT_CLIENT_ID, challenge, issuedAt });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { typed_data: typedDataToJson(td), issued_at: issuedAt };
  });

  router.post('/api/session', async (ctx) => {
    requireSameOrigin(deps, ctx);
    await limitSignInsFrom(deps, ctx);
    const body = parse(SignInBody, await readJsonBody(ctx));
    const wallet = body.wallet.toLowerCase() as `0x${string}`;
    const issued = await takeChallenge(deps, ctx);
    if (!issued || issued.wallet !== wallet || issued.issuedAt !== body.issuedAt) throw new ApiError('INVALID_REQUEST', CHALLENGE_UNUSABLE);
    const problem = await walletProofProblem(deps, { wallet, clientId: ACCOUNT_CLIENT_ID, challenge: issued.challenge, issuedAt: issued.issuedAt }, body.signature as `0x${string}`);
    if (problem) throw new ApiError('INVALID_REQUEST', problem);
    // The cookie and signature could be sent again: the challenge signs in once.
    if (!(await spendChallenge(deps, issued))) throw new ApiError('INVALID_REQUEST', CHALLENGE_UNUSABLE);
    await limitSignInsOf(deps, wallet);
    const borrower = await findBorrowerByWallet(deps.store.c, wallet);
    if (!borrower) throw ApiError.notFound('borrower for this wallet: sign in through your agent first');
    await startSession(deps, ctx, { borrowerId: borrower._id, wallet });
    deps.logger.info('borrower signed in to their page', { borrowerId: borrower._id });
    ctx.body = { borrower_id: borrower._id, wallet };
  });

  router.post('/api/session/end', async (ctx) => {
    requireSameOrigin(deps, ctx);
    await endSession(deps, ctx);
    ctx.body = { signed_out: true };
  });

  router.get('/api/account', async (ctx) => {
    const session = await requireSession(deps, ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await accountView(deps, session);
  });

  router.post('/api/agent-keys/:id/revoke', async (ctx) => {
    const session = await requireSessionPost(deps, ctx);
    await jsonBody(ctx, EmptyBody);
    ctx.body = await revokeKey(deps, session, pathId(ctx, 'agent key'));
  });

  router.post('/api/operational-agents/:id/revoke', async (ctx) => {
    const session = await requireSessionPost(deps, ctx);
    await jsonBody(ctx, EmptyBody);
    ctx.body = await revokeAgent(deps, session, pathId(ctx, 'operational agent'));
  });

  router.post('/api/connected-clients/disconnect', async (ctx) => {
    const session = await requireSessionPost(deps, ctx);
    const { client_id } = await jsonBody(ctx, DisconnectBody);
    ctx.body = await disconnectClient(deps, session, client_id);
  });

  router.post('/api/agent-keys/:id/limits/typed-data', async (ctx) => {
    const session = await requireSessionPost(deps, ctx);
    const limits = parse(Limits, await readJsonBody(ctx));
    ctx.body = await lowerLimitTypedData(deps, session, pathId(ctx, 'agent key'), limits);
  });

  router.post('/api/agent-keys/:id/limits', async (ctx) => {
    const session = await requireSessionPost(deps, ctx);
    const body = parse(SignedLimits, await readJsonBody(ctx));
    ctx.body = await lowerLimit(deps, session, pathId(ctx, 'agent key'), { ...body, nonce: body.nonce as `0x${string}` });
  });

  return router;
}
