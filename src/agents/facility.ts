import type { AgentDeps } from './deps.js';
import { FACILITY_TERMS_HASH } from '../domain/facility-terms.js';
import { newId } from '@credit-facilitator/wire/ids';
import { facilityAcceptanceTypedData, typedDataToJson } from '../domain/typed-data.js';
import { randomNonce } from '@credit-facilitator/wire/voucher';
import { getAddress } from 'viem';
import { ensureSigningRequest, findSigningRequest } from '../store/signing-requests.js';
import { borrowerDomainInput, loadBorrower, NEXT_STEP, stageOf, walletOf } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { idempotentToolCall } from './idempotency.js';
import type { AcceptCreditFacilityInput } from './schemas.js';
import { currentSigningStep } from './signing.js';
import type { BorrowerPrincipal, SigningStep } from './types.js';

/** accept_credit_facility: a FacilityAcceptance for the borrower's wallet to sign (credit line DEFAULT_CREDIT_LIMIT). */
export async function acceptCreditFacility(deps: AgentDeps, p: BorrowerPrincipal, args: AcceptCreditFacilityInput): Promise<SigningStep> {
  const b = await loadBorrower(deps, p);
  const wallet = walletOf(b);
  return idempotentToolCall(
    deps,
    p,
    { tool: 'accept_credit_facility', key: args.idempotency_key, args, newRef: () => ({ signing_request_id: newId() }) },
    async ({ ref, replayed }) => {
      const id = ref.signing_request_id;
      // A concurrent duplicate may replay before the first call has written the request: it writes it then.
      if (!replayed || !(await findSigningRequest(deps.store.c, id))) {
        const stage = stageOf(b);
        if (stage !== 'WALLET_VERIFIED') {
          throw new ToolError('STAGE_REQUIRED', `accept_credit_facility needs stage WALLET_VERIFIED; the borrower is at ${stage}. ${NEXT_STEP[stage]}`, {
            stage,
            required_stage: 'WALLET_VERIFIED',
          });
        }
        const nowMs = deps.nowMs();
        const expiresAt = new Date(nowMs + deps.env.SIGNING_REQUEST_TTL_SECONDS * 1000);
        const creditLimit = deps.env.DEFAULT_CREDIT_LIMIT;
        const typed = facilityAcceptanceTypedData(borrowerDomainInput(deps), {
          borrowerId: b._id,
          wallet,
          creditLimit: BigInt(creditLimit),
          asset: getAddress(deps.settlement.asset),
          termsHash: FACILITY_TERMS_HASH,
          nonce: randomNonce(),
          deadline: Math.floor(expiresAt.getTime() / 1000),
        });
        await ensureSigningRequest(deps.store.c, {
          _id: id,
          borrowerId: b._id,
          kind: 'facility_acceptance',
          typedData: typedDataToJson(typed),
          wallet: wallet.toLowerCase(),
          status: 'PENDING',
          action: { creditLimit },
          expiresAt,
          createdAt: new Date(nowMs),
          updatedAt: new Date(nowMs),
        });
      }
      return currentSigningStep(deps, id, args.wait_seconds ?? 0);
    },
  );
}
