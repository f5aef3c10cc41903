import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Hash, Hex } from 'viem';
import { awaitTransaction } from '../src/chain/await-transaction.js';
import { testUsdcAbi } from '../src/chain/abi.js';
import { repayWithAuthorization, RepaymentRevertedError, type Eip3009Authorization } from '../src/chain/eip3009.js';
import type { ChainContext } from '../src/chain/context.js';
import { findBorrower } from '../src/store/borrowers.js';
import type { Store } from '../src/store/mongo.js';
import { bookRepayment, findRepayment, updateRepayment } from '../src/store/repayments.js';
import { closeSigningRequest, findSigningRequest } from '../src/store/signing-requests.js';
import type { RepaymentOutcome } from '../src/temporal/agent-definitions.js';
import type { WorkerMetrics } from '../src/observability/metrics.js';

export interface RepaymentActivityDeps {
  store: Store;
  chain: ChainContext;
  settings: { confirmations: number };
  metrics?: WorkerMetrics;
}

export type RepaymentConfirmation =
  | { status: 'confirmed'; transaction: string; blockNumber: string }
  | { status: 'reverted'; transaction: string }
  | { status: 'dropped' };

const invalid = (message: string) => ApplicationFailure.nonRetryable(message, 'REPAYMENT_INVALID');

/** The stored authorization (decimal strings) back as the EIP-3009 message. */
function authorizationFrom(action: Record<string, unknown>): Eip3009Authorization {
  const a = action.authorization as Record<string, string> | undefined;
  if (!a) throw invalid('signing request has no authorization');
  return {
    from: a.from as `0x${string}`,
    to: a.to as `0x${string}`,
    value: BigInt(a.value as string),
    validAfter: BigInt(a.validAfter as string),
    validBefore: BigInt(a.validBefore as string),
    nonce: a.nonce as `0x${string}`,
  };
}

export function createRepaymentActivities(deps: RepaymentActivityDeps) {
  const c = deps.store.c;
  const chain = deps.chain;

  const authorizationUsed = (from: `0x${string}`, nonce: `0x${string}`) =>
    chain.publicClient.readContract({ address: chain.deployment.asset, abi: testUsdcAbi, functionName: 'authorizationState', args: [from, nonce] });

  /** The transaction that redeemed the authorization, from the asset's AuthorizationUsed event. */
  const redeemingTransaction = async (from: `0x${string}`, nonce: `0x${string}`): Promise<Hash | null> => {
    const logs = await chain.publicClient.getContractEvents({
      address: chain.deployment.asset,
      abi: testUsdcAbi,
      eventName: 'AuthorizationUsed',
      args: { authorizer: from, nonce },
      fromBlock: BigInt(chain.deployment.deployBlock),
      toBlock: 'latest',
    });
    return logs[0]?.transactionHash ?? null;
  };

  const load = async (repaymentId: string) => {
    const rep = await findRepayment(c, repaymentId);
    if (!rep) throw invalid(`repayment ${repaymentId} not found`);
    const sr = await findSigningRequest(c, rep.signingRequestId);
    if (!sr?.signature) throw invalid('repayment is not signed');
    return { rep, sr, authorization: authorizationFrom(sr.action) };
  };

  return {
    /**
     * Broadcasts repayWithAuthorization once. A retry that finds the authorization already used
     * looks up the transaction that used it instead of sending again.
     */
    async submitRepayment(input: { repaymentId: string }): Promise<{ transaction: string }> {
      const { rep, sr, authorization } = await load(input.repaymentId);
      if (await authorizationUsed(authorization.from, authorization.nonce)) {
        const tx = await redeemingTransaction(authorization.from, authorization.nonce);
        if (!tx) throw new Error('authorization used but its transaction is not visible yet');
        await updateRepayment(c, rep._id, { status: 'SUBMITTED', transaction: tx });
        return { transaction: tx };
      }
      try {
        const tx = await repayWithAuthorization(chain, { borrowerId: rep.borrowerId, authorization, signature: sr.signature as Hex });
        await updateRepayment(c, rep._id, { status: 'SUBMITTED', transaction: tx });
        return { transaction: tx };
      } catch (err) {
        if (err instanceof RepaymentRevertedError) throw ApplicationFailure.nonRetryable(err.errorName ?? err.message, 'REPAYMENT_REVERTED');
        throw err;
      }
    },

    /** Polls for the receipt at the configured depth, heartbeating; 'dropped' when the node forgot the transaction. */
    async awaitRepaymentConfirmation(input: { repaymentId: string; transaction: string }): Promise<RepaymentConfirmation> {
      const ctx = Context.current();
      const conf = await awaitTransaction(chain, input.transaction, deps.settings.confirmations, (p) => ctx.heartbeat(p));
      if (conf.status === 'dropped') deps.metrics?.chain.txDropped.inc({ purpose: 'repayment' });
      return conf.status === 'confirmed' ? { status: 'confirmed', transaction: conf.transaction, blockNumber: conf.blockNumber } : conf;
    },

    /** Lowers booked debt and restores available credit, once per repayment. */
    async bookRepayment(input: { repaymentId: string; transaction: string; blockNumber: string }): Promise<RepaymentOutcome> {
      const rep = await findRepayment(c, input.repaymentId);
      if (!rep) throw invalid(`repayment ${input.repaymentId} not found`);
      await bookRepayment(c, rep.borrowerId, rep._id, Number(rep.amount));
      await updateRepayment(c, rep._id, { status: 'CONFIRMED', transaction: input.transaction, blockNumber: input.blockNumber });
      const b = await findBorrower(c, rep.borrowerId);
      return {
        repayment_id: rep._id,
        status: 'CONFIRMED',
        transaction: input.transaction,
        ...(b ? { debt: String(b.debt), available: String(b.available) } : {}),
      };
    },

    async finishRepayment(input: { repaymentId: string; outcome: RepaymentOutcome }): Promise<void> {
      const rep = await findRepayment(c, input.repaymentId);
      if (!rep) return;
      const o = input.outcome;
      const now = new Date();
      if (o.status === 'CONFIRMED') {
        await closeSigningRequest(c, rep.signingRequestId, { status: 'COMPLETED', result: { ...o } }, now);
        deps.metrics?.delivery.repayments.inc({ outcome: 'confirmed' });
      } else {
        await updateRepayment(c, rep._id, { status: 'FAILED', failureReason: o.failure_reason ?? 'failed', ...(o.transaction ? { transaction: o.transaction } : {}) });
        await closeSigningRequest(c, rep.signingRequestId, { status: 'FAILED', failureReason: o.failure_reason ?? 'failed' }, now);
        deps.metrics?.delivery.repayments.inc({ outcome: 'failed' });
        deps.metrics?.workflowFailures.inc({ kind: 'repayment' });
      }
    },
  };
}

export type RepaymentActivities = ReturnType<typeof createRepaymentActivities>;
