import { bytesToHex } from 'viem';
import type { AgentDeps } from './deps.js';
import { newId } from '@credit-facilitator/wire/ids';
import { agentGrantTypedData, typedDataToJson } from '../domain/typed-data.js';
import { decodePublicKey, randomNonce } from '@credit-facilitator/wire/voucher';
import { listAgentKeys } from '../store/borrowers.js';
import { ensureSigningRequest, findSigningRequest } from '../store/signing-requests.js';
import { borrowerDomainInput, loadBorrower, requireStage, resolveOperationalAgent, walletOf } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { idempotentToolCall } from './idempotency.js';
import type { RegisterAgentKeyInput, RotateAgentKeyInput } from './schemas.js';
import { currentSigningStep } from './signing.js';
import type { BorrowerPrincipal, SigningStep } from './types.js';

/** register_agent_key: an AgentGrant binding the agent's Ed25519 key and limits, for the wallet to sign. */
export function registerAgentKey(deps: AgentDeps, p: BorrowerPrincipal, args: RegisterAgentKeyInput): Promise<SigningStep> {
  return agentKeyStep(deps, p, args, false);
}

/** rotate_agent_key: as register_agent_key; once signed, the operational agent's other active keys are revoked. */
export function rotateAgentKey(deps: AgentDeps, p: BorrowerPrincipal, args: RotateAgentKeyInput): Promise<SigningStep> {
  return agentKeyStep(deps, p, args, true);
}

async function agentKeyStep(deps: AgentDeps, p: BorrowerPrincipal, args: RegisterAgentKeyInput, rotate: boolean): Promise<SigningStep> {
  const tool = rotate ? 'rotate_agent_key' : 'register_agent_key';
  const b = await loadBorrower(deps, p);
  const wallet = walletOf(b);
  return idempotentToolCall(
    deps,
    p,
    { tool, key: args.idempotency_key, args, newRef: () => ({ signing_request_id: newId(), key_id: newId() }) },
    async ({ ref, replayed }) => {
      if (!replayed || !(await findSigningRequest(deps.store.c, ref.signing_request_id))) {
        requireStage(b, rotate ? 'AGENT_KEY_REGISTERED' : 'FACILITY_ACCEPTED');
        const agent = await resolveOperationalAgent(deps, p, args.operational_agent_id);
        const nowMs = deps.nowMs();
        if (args.expires_at <= Math.floor(nowMs / 1000)) throw new ToolError('INVALID_INPUT', 'expires_at must be in the future', { fields: [{ path: 'expires_at', message: 'in the past' }] });
        const active = (await listAgentKeys(deps.store.c, agent._id)).filter((k) => k.status === 'active');
        if (!rotate && active.length > 0) {
          throw new ToolError('AGENT_KEY_EXISTS', 'this operational agent already has an active key; use rotate_agent_key to replace it', {
            key_ids: active.map((k) => k._id),
          });
        }
        if (active.some((k) => k.publicKey === args.public_key)) throw new ToolError('INVALID_INPUT', 'this public key is already the active key; rotate to a new key');
        const publicKey = decodePublicKey(args.public_key) as Uint8Array;
        const nonce = randomNonce();
        const expiresAt = new Date(nowMs + deps.env.SIGNING_REQUEST_TTL_SECONDS * 1000);
        const typed = agentGrantTypedData(borrowerDomainInput(deps), {
          borrowerId: b._id,
          operationalAgentId: agent._id,
          agentPublicKeyHex: bytesToHex(publicKey),
          perPaymentLimit: BigInt(args.per_payment_limit),
          dailyLimit: BigInt(args.daily_limit),
          expiresAt: args.expires_at,
          nonce,
        });
        await ensureSigningRequest(deps.store.c, {
          _id: ref.signing_request_id,
          borrowerId: b._id,
          kind: 'agent_grant',
          typedData: typedDataToJson(typed),
          wallet: wallet.toLowerCase(),
          status: 'PENDING',
          action: {
            keyId: ref.key_id,
            operationalAgentId: agent._id,
            publicKey: args.public_key,
            perPaymentLimit: args.per_payment_limit,
            dailyLimit: args.daily_limit,
            expiresAt: args.expires_at,
            nonce,
            rotate,
          },
          expiresAt,
          createdAt: new Date(nowMs),
          updatedAt: new Date(nowMs),
        });
      }
      return currentSigningStep(deps, ref.signing_request_id, args.wait_seconds ?? 0);
    },
  );
}
