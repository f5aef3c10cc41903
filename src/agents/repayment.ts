import type { AgentDeps } from './deps.js';
import { buildRepaymentAuthorization, receiveWithAuthorizationTypedData, repaymentNonce } from '../chain/eip3009.js';
import { newId } from '@credit-facilitator/wire/ids';
import { typedDataToJson } from '../domain/typed-data.js';
import { ensureRepayment } from '../store/repayments.js';
import { ensureSigningRequest, findSigningRequest } from '../store/signing-requests.js';
import { deploymentOf, loadBorrower, requireStage, walletOf } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { idempotentToolCall } from './idempotency.js';
import type { ExecuteRepaymentInput } from './schemas.js';
import { currentSigningStep } from './signing.js';
import type { BorrowerPrincipal, SigningStep } from './types.js';

/** The authorization stays redeemable this long after the signing link closes, so a slow chain still takes it. */
const AUTHORIZATION_GRACE_SECONDS = 3600;

/**
 * execute_repayment: a USDC ReceiveWithAuthorization from the borrower's wallet to the settlement
 * contract, nonce bound to the borrower. Once signed, repayment-{id} redeems it and books it.
 */
export async function executeRepayment(deps: AgentDeps, p: BorrowerPrincipal, args: ExecuteRepaymentInput): Promise<SigningStep> {
  const b = await loadBorrower(deps, p);
  const wallet = walletOf(b);
  return idempotentToolCall(
    deps,
    p,
    { tool: 'execute_repayment', key: args.idempotency_key, args, newRef: () => ({ signing_request_id: newId(), repayment_id: newId() }) },
    async ({ ref, replayed }) => {
      if (!replayed || !(await findSigningRequest(deps.store.c, ref.signing_request_id))) {
        requireStage(b, 'ACTIVE');
        const amount = BigInt(args.amount);
        if (amount > BigInt(b.debt)) {
          throw new ToolError('INVALID_INPUT', `amount exceeds the booked debt (${b.debt})`, { debt: String(b.debt), fields: [{ path: 'amount', message: 'exceeds debt' }] });
        }
        const nowMs = deps.nowMs();
        const now = new Date(nowMs);
        const rep = await ensureRepayment(deps.store.c, {
          _id: ref.repayment_id,
          borrowerId: b._id,
          amount: args.amount,
          from: wallet.toLowerCase(),
          nonce: repaymentNonce(b._id),
          signingRequestId: ref.signing_request_id,
          status: 'AWAITING_SIGNATURE',
          createdAt: now,
          updatedAt: now,
        });
        const expiresAt = new Date(nowMs + deps.env.SIGNING_REQUEST_TTL_SECONDS * 1000);
        const deployment = deploymentOf(deps);
        const authorization = buildRepaymentAuthorization(deployment, {
          borrowerId: b._id,
          from: wallet,
          value: amount,
          nowSeconds: Math.floor(nowMs / 1000),
          validForSeconds: deps.env.SIGNING_REQUEST_TTL_SECONDS + AUTHORIZATION_GRACE_SECONDS,
          nonce: rep.nonce as `0x${string}`,
        });
        await ensureSigningRequest(deps.store.c, {
          _id: ref.signing_request_id,
          borrowerId: b._id,
          kind: 'repayment',
          typedData: typedDataToJson(receiveWithAuthorizationTypedData(deployment, authorization)),
          wallet: wallet.toLowerCase(),
          status: 'PENDING',
          action: {
            repaymentId: rep._id,
            authorization: {
              from: authorization.from,
              to: authorization.to,
              value: authorization.value.toString(),
              validAfter: authorization.validAfter.toString(),
              validBefore: authorization.validBefore.toString(),
              nonce: authorization.nonce,
            },
          },
          expiresAt,
          createdAt: now,
          updatedAt: now,
        });
      }
      return currentSigningStep(deps, ref.signing_request_id, args.wait_seconds ?? 0);
    },
  );
}
