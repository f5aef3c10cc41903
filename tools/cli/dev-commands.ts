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
import { UsageError } from './output.js';

function requireDevTools(ctx: CliContext) {
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

/** Dev only: what prepare_x402_payment plus the agent's signer do, in one step. */
export async function devVoucher(
  ctx: CliContext,
  opts: { merchant?: string; borrower?: string; agent?: string; agentPrivateKey?: string; amount?: string; orderRef?: string; resource?: string; ttl?: string },
) {
  requireDevTools(ctx);
  for (const k of ['merchant', 'borrower', 'agent', 'agentPrivateKey', 'amount'] as const) {
    if (!opts[k]) throw new UsageError(`--${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} is required`);
  }
  const privateKey = decodePrivateKey(opts.agentPrivateKey as string);
  if (!privateKey) throw new UsageError('--agent-private-key must be the base64url key printed by "dev borrower create"');
  const merchant = await findMerchant(ctx.store.c, (opts.merchant as string).toLowerCase());
  if (!merchant) throw new UsageError(`no merchant ${opts.merchant}`);
  const { asset, network } = settlementTarget(ctx);
  const now = Math.floor(Date.now() / 1000);
  const expiresAt = now + Number(opts.ttl ?? '600');
  const orderRef = opts.orderRef ?? `order-${newId().slice(0, 8)}`;
  const resource = opts.resource ?? 'http://127.0.0.1:9000/premium';
  const intent = await createSpendIntent(
    ctx.store.c,
    {
      borrowerId: (opts.borrower as string).toLowerCase(),
      operationalAgentId: (opts.agent as string).toLowerCase(),
      merchantId: merchant._id,
      payTo: merchant.payoutAddress,
      amount: opts.amount as string,
      asset,
      network,
      orderRef,
      resource,
      idempotencyKey: newId(),
      expiresAt,
    },
    new Date(),
  );
  const voucher = buildVoucher({
    spendIntentId: intent._id,
    borrowerId: intent.borrowerId,
    operationalAgentId: intent.operationalAgentId,
    merchantId: merchant._id,
    payTo: getAddress(merchant.payoutAddress).toLowerCase(),
    amount: intent.amount,
    asset,
    network,
    resource,
    orderRef,
    issuedAt: now,
    expiresAt,
  });
  const paymentPayload = signedCreditPayload(voucher, privateKey);
  return {
    agentPublicKey: encodeKey(publicKeyFromPrivate(privateKey)),
    paymentPayload,
    paymentSignatureHeader: encodePaymentSignatureHeader(paymentPayload as never),
    captureBody: { x402Version: 2, paymentPayload },
  };
}

/**
 * Dev only: mints test USDC to a wallet (a borrower's, to try execute_repayment; a merchant's
 * payout wallet, to try a refund beyond what it received). Works on the embedded anvil, where the
 * stack deployed TestUSDC with anvil's public dev key; any other chain refuses (NotOwner).
 */
export async function devFund(ctx: CliContext, opts: { wallet?: string; amount?: string }) {
  requireDevTools(ctx);
  if (!opts.wallet || !isAddress(opts.wallet)) throw new UsageError('--wallet <0x address> is required');
  if (!opts.amount || !/^[1-9][0-9]{0,30}$/.test(opts.amount)) throw new UsageError('--amount must be a positive whole number of base units');
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
