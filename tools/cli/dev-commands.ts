import { createPublicClient, createWalletClient, getAddress, http, isAddress } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { testUsdcAbi } from '../../src/chain/abi.js';
import { ANVIL_DEV_PRIVATE_KEY } from '../stack/deployment.js';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { buildVoucher, signedCreditPayload } from '@credit-facilitator/wire/credit-envelope';
import { newId } from '@credit-facilitator/wire/ids';
import { decodePrivateKey, encodeKey, generateAgentKeyPair, publicKeyFromPrivate, decodePublicKey } from '@credit-facilitator/wire/voucher';
import { createSpendIntent } from '../../src/payments/spend-intents.js';
import { findMerchant } from '../../src/store/merchants.js';
import { insertBorrower } from '../../src/store/borrowers.js';
import { ensureAgentKey, ensureOperationalAgent } from '../../src/store/operational-agents.js';
import { settlementTarget, type CliContext } from './context.js';
import { baseUrl } from '../../src/config/env.js';
import type { PaymentRequirements } from '@credit-facilitator/wire/envelope';
import { UsageError } from './output.js';

/** An amount in the asset's base units, as every dev command takes it: a positive whole number. */
const BASE_UNITS = /^[1-9][0-9]{0,30}$/;
const BASE_UNITS_REQUIRED = '--amount must be a positive whole number of base units';

export function requireDevTools(ctx: CliContext) {
  if (!ctx.env.DEV_TOOLS) throw new UsageError('dev commands are disabled (DEV_TOOLS=false); onboard borrowers through the MCP endpoint');
}

/**
 * Dev only, never reachable over HTTP: an ACTIVE borrower with a credit line and an agent key, so
 * the merchant path can be exercised before agent onboarding exists.
 */
export async function devBorrowerCreate(ctx: CliContext, opts: { credit?: string; agentPublicKey?: string }) {
  requireDevTools(ctx);
  const credit = Number(opts.credit ?? '1000000000');
  if (!Number.isSafeInteger(credit) || credit <= 0) throw new UsageError('--credit must be a positive whole number of base units');
  let generated: { privateKey: Uint8Array; publicKey: Uint8Array } | null = null;
  let publicKey = opts.agentPublicKey;
  if (publicKey === undefined) {
    generated = generateAgentKeyPair();
    publicKey = encodeKey(generated.publicKey);
  } else if (!decodePublicKey(publicKey)) {
    throw new UsageError('--agent-public-key must be a base64url Ed25519 public key (32 bytes)');
  }
  const borrowerId = newId();
  const operationalAgentId = newId();
  const now = new Date();
  const c = ctx.store.c;
  await insertBorrower(c, { _id: borrowerId, status: 'ACTIVE', creditLimit: credit, available: credit, holds: {}, debt: 0, operationalAgentIds: [], createdAt: now, updatedAt: now });
  await ensureOperationalAgent(c, { _id: operationalAgentId, borrowerId, clientId: 'dev-cli', createdAt: now });
  await ensureAgentKey(c, { _id: newId(), borrowerId, operationalAgentId, publicKey, status: 'active', createdAt: now, revokedAt: null });
  return {
    borrowerId,
    operationalAgentId,
    creditLimit: String(credit),
    agentPublicKey: publicKey,
    ...(generated ? { agentPrivateKey: encodeKey(generated.privateKey) } : {}),
  };
}

export interface DevVoucherOptions {
  merchant?: string;
  borrower?: string;
  agent?: string;
  agentPrivateKey?: string;
  amount?: string;
  orderRef?: string;
  resource?: string;
  ttl?: string;
  /** The merchant's advertised requirement (a 402's credit `accepts` entry): the envelope carries it as-is. */
  accepted?: PaymentRequirements;
}

/** x402's default for a route that sets none; what a stock paywall advertises. */
const STOCK_MAX_TIMEOUT_SECONDS = 300;

/**
 * Dev only: what prepare_x402_payment plus the agent's signer do, in one step. The envelope's
 * `accepted` is the merchant's requirement as advertised (given, or built as a stock
 * `@x402/express` paywall with CreditSchemeServer builds it), so the paywall matches it.
 */
export async function devVoucher(ctx: CliContext, opts: DevVoucherOptions) {
  requireDevTools(ctx);
  const offered = opts.accepted;
  const merchantId = opts.merchant ?? (typeof offered?.extra?.merchantId === 'string' ? offered.extra.merchantId : undefined);
  if (!merchantId) throw new UsageError(offered ? 'the offer names no extra.merchantId: pass --merchant' : '--merchant is required');
  for (const k of ['borrower', 'agent', 'agentPrivateKey'] as const) {
    if (!opts[k]) throw new UsageError(`--${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} is required`);
  }
  if (!offered && !opts.amount) throw new UsageError('--amount is required');
  if (opts.amount !== undefined && !BASE_UNITS.test(opts.amount)) throw new UsageError(`${BASE_UNITS_REQUIRED} (got ${JSON.stringify(opts.amount)})`);
  if (offered && opts.amount && opts.amount !== offered.amount) throw new UsageError(`--amount ${opts.amount} differs from the offer's ${offered.amount}`);
  const ttlSeconds = Number(opts.ttl ?? '600');
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) throw new UsageError(`--ttl must be a positive whole number of seconds (got ${JSON.stringify(opts.ttl)})`);
  const privateKey = decodePrivateKey(opts.agentPrivateKey as string);
  if (!privateKey) throw new UsageError('--agent-private-key must be the base64url key printed by "dev borrower create"');
  const merchant = await findMerchant(ctx.store.c, merchantId.toLowerCase());
  if (!merchant) throw new UsageError(`no merchant ${merchantId}`);
  const { asset, network } = settlementTarget(ctx);
  const payTo = getAddress(merchant.payoutAddress).toLowerCase();
  if (offered) offerProblems(offered, { asset, network, payTo });
  const amount = offered?.amount ?? (opts.amount as string);
  const now = Math.floor(Date.now() / 1000);
  const expiresAt = now + ttlSeconds;
  const offeredOrder = offered?.extra?.orderRef;
  const orderRef = typeof offeredOrder === 'string' ? offeredOrder : (opts.orderRef ?? `order-${newId().slice(0, 8)}`);
  const resource = opts.resource ?? 'http://127.0.0.1:9000/premium';
  const idempotencyKey = newId();
  const intent = await createSpendIntent(
    ctx.store.c,
    {
      borrowerId: (opts.borrower as string).toLowerCase(),
      operationalAgentId: (opts.agent as string).toLowerCase(),
      merchantId: merchant._id,
      payTo: merchant.payoutAddress,
      amount,
      asset,
      network,
      orderRef,
      resource,
      idempotencyKey,
      expiresAt,
    },
    new Date(),
  );
  const voucher = buildVoucher({
    spendIntentId: intent._id,
    borrowerId: intent.borrowerId,
    operationalAgentId: intent.operationalAgentId,
    merchantId: merchant._id,
    payTo,
    amount: intent.amount,
    asset,
    network,
    resource,
    orderRef,
    issuedAt: now,
    expiresAt,
  });
  const accepted: PaymentRequirements = offered ?? {
    scheme: 'credit',
    network,
    asset,
    amount,
    payTo,
    maxTimeoutSeconds: STOCK_MAX_TIMEOUT_SECONDS,
    extra: { merchantId: merchant._id, orderRef, facilitator: baseUrl(ctx.env) },
  };
  const paymentPayload = signedCreditPayload(voucher, privateKey, accepted);
  return {
    agentPublicKey: encodeKey(publicKeyFromPrivate(privateKey)),
    voucherId: voucher.voucherId,
    orderRef,
    idempotencyKey,
    paymentPayload,
    paymentSignatureHeader: encodePaymentSignatureHeader(paymentPayload as never),
    // paymentRequirements is the merchant's echo verify needs (capture takes it too).
    captureBody: { x402Version: 2, paymentPayload, paymentRequirements: accepted },
  };
}

/** Refuses an offer our facilitator would reject whatever the voucher says: another network, asset or payee. */
function offerProblems(offer: PaymentRequirements, ours: { asset: string; network: string; payTo: string }): void {
  if (offer.network !== ours.network) throw new UsageError(`the offer is on ${offer.network}; this facilitator settles on ${ours.network}`);
  if (offer.asset.toLowerCase() !== ours.asset) throw new UsageError(`the offer asks for asset ${offer.asset}; this facilitator settles ${ours.asset}`);
  if (offer.payTo.toLowerCase() !== ours.payTo) throw new UsageError(`the offer pays ${offer.payTo}, not the merchant's payout address ${ours.payTo}`);
}

/**
 * Dev only: mints test USDC to a wallet (a borrower's, to try execute_repayment; a merchant's
 * payout wallet, to try a refund beyond what it received). Works on the embedded anvil, where the
 * stack deployed TestUSDC with anvil's public dev key; any other chain refuses (NotOwner).
 */
export async function devFund(ctx: CliContext, opts: { wallet?: string; amount?: string }) {
  requireDevTools(ctx);
  if (!opts.wallet || !isAddress(opts.wallet)) throw new UsageError('--wallet <0x address> is required');
  if (!opts.amount || !BASE_UNITS.test(opts.amount)) throw new UsageError(BASE_UNITS_REQUIRED);
  const { asset } = settlementTarget(ctx);
  const rpcUrl = ctx.env.RPC_URL ?? `http://127.0.0.1:${ctx.env.ANVIL_PORT}`;
  const transport = http(rpcUrl, { retryCount: 2, timeout: 20_000 });
  const wallet = createWalletClient({ account: privateKeyToAccount(ANVIL_DEV_PRIVATE_KEY), transport });
  const reader = createPublicClient({ transport });
  const to = getAddress(opts.wallet);
  const hash = await wallet.writeContract({ chain: null, address: asset as `0x${string}`, abi: testUsdcAbi, functionName: 'mint', args: [to, BigInt(opts.amount)] });
  const receipt = await reader.waitForTransactionReceipt({ hash });
  if (receipt.status !== 'success') throw new UsageError(`mint reverted in ${hash}: is this the embedded anvil?`);
  const balance = await reader.readContract({ address: asset as `0x${string}`, abi: testUsdcAbi, functionName: 'balanceOf', args: [to] });
  return { wallet: to, minted: opts.amount, balance: balance.toString(), transaction: hash };
}
