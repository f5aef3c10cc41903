import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { formatUnits, getAddress, verifyTypedData, type Hex, type TypedDataDefinition } from 'viem';
import type { AgentDeps } from './deps.js';
import type { SigningKind, SigningRequestDoc } from '../store/documents.js';
import { closeSigningRequest, findSigningRequest, markExpired, markSigned } from '../store/signing-requests.js';
import { BorrowerIdKey } from '../temporal/search-attributes.js';
import { acceptFacilityUpdate, registerAgentKeyUpdate, repaymentWorkflowId } from '../temporal/agent-definitions.js';
import { signingUrl } from './context.js';
import { ToolError } from '../domain/tool-errors.js';
import { runOnboardingUpdate } from './onboarding-client.js';
import type { SigningStatus, SigningStep } from './types.js';
import { isCanonicalSignature } from '../domain/signature.js';

const SIGNATURE_RE = /^0x(?:[0-9a-fA-F]{128}|[0-9a-fA-F]{130})$/;

export function signingStatus(doc: SigningRequestDoc, nowMs: number): SigningStatus {
  switch (doc.status) {
    case 'PENDING':
      return doc.expiresAt.getTime() <= nowMs ? 'expired' : 'signature_required';
    case 'SIGNED':
      return 'processing';
    case 'COMPLETED':
      return 'completed';
    case 'FAILED':
      return 'failed';
    default:
      return 'expired';
  }
}

export function toSigningStep(deps: AgentDeps, doc: SigningRequestDoc): SigningStep {
  return {
    status: signingStatus(doc, deps.nowMs()),
    signing_request_id: doc._id,
    signing_url: signingUrl(deps, doc._id),
    typed_data: doc.typedData,
    expires_at: doc.expiresAt.toISOString(),
    ...(doc.result ? { result: doc.result } : {}),
    ...(doc.failureReason ? { failure_reason: doc.failureReason } : {}),
  };
}

const open = (s: SigningStatus) => s === 'signature_required' || s === 'processing';

/**
 * The step's current state; with wait_seconds, polls until it leaves signature_required/processing
 * or the wait ends. A request left SIGNED (its apply was interrupted) is resumed on the way.
 */
export async function currentSigningStep(deps: AgentDeps, id: string, waitSeconds = 0): Promise<SigningStep> {
  const deadline = deps.nowMs() + Math.min(waitSeconds, 25) * 1000;
  let resumed = false;
  for (;;) {
    const doc = await findSigningRequest(deps.store.c, id);
    if (!doc) throw new ToolError('NOT_FOUND', 'signing request not found');
    if (doc.status === 'SIGNED' && !resumed) {
      resumed = true;
      await applySigned(deps, doc).catch(() => undefined);
      continue;
    }
    const step = toSigningStep(deps, doc);
    if (!open(step.status) || deps.nowMs() >= deadline) return step;
    await sleep(Math.min(500, Math.max(0, deadline - deps.nowMs())));
  }
}

/** The stored JSON typed data with uint/int fields back as bigint, as viem hashes them. */
export function typedDataFromJson(td: Record<string, unknown>): TypedDataDefinition {
  const types = td.types as Record<string, { name: string; type: string }[]>;
  const primaryType = td.primaryType as string;
  const message = { ...(td.message as Record<string, unknown>) };
  for (const f of types[primaryType] ?? []) {
    if (/^u?int\d*$/.test(f.type) && message[f.name] !== undefined) message[f.name] = BigInt(message[f.name] as string | number);
  }
  return { domain: td.domain, types, primaryType, message } as unknown as TypedDataDefinition;
}

function summaryOf(doc: SigningRequestDoc, deps: AgentDeps): string {
  const a = doc.action;
  const units = (v: unknown) => `${formatUnits(BigInt(String(v)), deps.settlement.assetDecimals)} ${deps.settlement.assetName}`;
  const kinds: Record<SigningKind, () => string> = {
    facility_acceptance: () => `Accept a credit facility of ${units(a.creditLimit)} under the facility terms.`,
    agent_grant: () =>
      `${a.rotate ? 'Rotate to' : 'Authorise'} agent key ${String(a.publicKey)}: up to ${units(a.perPaymentLimit)} per payment and ${units(a.dailyLimit)} per day, until ${new Date(Number(a.expiresAt) * 1000).toISOString()}.${a.rotate ? ' Your other keys for this agent are revoked.' : ''}`,
    repayment: () => `Repay ${units((a.authorization as Record<string, unknown>).value)} of your credit debt from your wallet.`,
  };
  return kinds[doc.kind]();
}

export interface SigningRequestView {
  kind: SigningKind;
  status: SigningStatus;
  wallet: string;
  typed_data: Record<string, unknown>;
  expires_at: string;
  summary: string;
  result?: Record<string, unknown>;
  failure_reason?: string;
}

/** What the signing page shows; null for an unknown id. */
export async function getSigningRequestView(deps: AgentDeps, id: string): Promise<SigningRequestView | null> {
  const doc = await findSigningRequest(deps.store.c, id);
  if (!doc) return null;
  return {
    kind: doc.kind,
    status: signingStatus(doc, deps.nowMs()),
    wallet: doc.wallet,
    typed_data: doc.typedData,
    expires_at: doc.expiresAt.toISOString(),
    summary: summaryOf(doc, deps),
    ...(doc.result ? { result: doc.result } : {}),
    ...(doc.failureReason ? { failure_reason: doc.failureReason } : {}),
  };
}

export interface SubmitOutcome {
  status: SigningStatus;
  result?: Record<string, unknown>;
  failure_reason?: string;
}

/**
 * The borrower's wallet signature for a pending request: verified against the request's wallet,
 * recorded once (PENDING -> SIGNED), then applied. Posting the same signature again returns the
 * current state (and resumes an interrupted apply); another signature for a closed request is refused.
 */
export async function submitSignature(deps: AgentDeps, id: string, signatureHex: string): Promise<SubmitOutcome> {
  const c = deps.store.c;
  if (!SIGNATURE_RE.test(signatureHex)) throw new ToolError('SIGNATURE_INVALID', 'signature must be 0x-prefixed 65-byte hex');
  const signature = signatureHex.toLowerCase();
  let doc = await findSigningRequest(c, id);
  if (!doc) throw new ToolError('NOT_FOUND', 'signing request not found');

  if (doc.status === 'PENDING') {
    const now = new Date(deps.nowMs());
    if (doc.expiresAt <= now) {
      await markExpired(c, id, now);
      throw new ToolError('SIGNING_REQUEST_CLOSED', 'this signing request expired; ask the agent for a new one', { status: 'expired' });
    }
    // Only the form the asset accepts (src/domain/signature.ts): a high-s twin, a 64-byte compact
    // signature or v 0/1 would verify here yet be a second, different signature for the same request.
    if (!isCanonicalSignature(signature)) {
      throw new ToolError('SIGNATURE_INVALID', 'signature must be the 65-byte form (r, s, v) with a low s and v 27 or 28 that wallets return; send it as the wallet returned it');
    }
    const valid = await verifyTypedData({ address: getAddress(doc.wallet), signature: signature as Hex, ...typedDataFromJson(doc.typedData) }).catch(() => false);
    if (!valid) throw new ToolError('SIGNATURE_INVALID', `the signature is not from ${getAddress(doc.wallet)} over this request`);
    await markSigned(c, id, signature, now);
    doc = (await findSigningRequest(c, id)) as SigningRequestDoc;
  }

  if (doc.signature !== signature) {
    throw new ToolError('SIGNING_REQUEST_CLOSED', `this signing request is already ${signingStatus(doc, deps.nowMs())}`, { status: signingStatus(doc, deps.nowMs()) });
  }
  if (doc.status === 'SIGNED') await applySigned(deps, doc);
  const final = (await findSigningRequest(c, id)) as SigningRequestDoc;
  return {
    status: signingStatus(final, deps.nowMs()),
    ...(final.result ? { result: final.result } : {}),
    ...(final.failureReason ? { failure_reason: final.failureReason } : {}),
  };
}

/**
 * Carries out what a SIGNED request asks for. Onboarding updates complete it here; a repayment
 * starts its workflow, which completes it once the chain confirms. Refusals close it FAILED;
 * UNAVAILABLE leaves it SIGNED, so posting again (or re-calling the tool) resumes.
 */
async function applySigned(deps: AgentDeps, doc: SigningRequestDoc): Promise<void> {
  const c = deps.store.c;
  const a = doc.action;
  const signature = doc.signature as string;
  try {
    if (doc.kind === 'facility_acceptance') {
      const result = await runOnboardingUpdate(deps, doc.borrowerId, acceptFacilityUpdate, { signingRequestId: doc._id, creditLimit: String(a.creditLimit) }, `sign-${doc._id}`);
      await closeSigningRequest(c, doc._id, { status: 'COMPLETED', result }, new Date(deps.nowMs()));
    } else if (doc.kind === 'agent_grant') {
      const result = await runOnboardingUpdate(
        deps,
        doc.borrowerId,
        registerAgentKeyUpdate,
        {
          signingRequestId: doc._id,
          keyId: String(a.keyId),
          operationalAgentId: String(a.operationalAgentId),
          publicKey: String(a.publicKey),
          rotate: a.rotate === true,
          grant: {
            perPaymentLimit: String(a.perPaymentLimit),
            dailyLimit: String(a.dailyLimit),
            expiresAt: Number(a.expiresAt),
            nonce: String(a.nonce),
            signature,
            signingRequestId: doc._id,
          },
        },
        `sign-${doc._id}`,
      );
      await closeSigningRequest(c, doc._id, { status: 'COMPLETED', result }, new Date(deps.nowMs()));
    } else {
      await startRepayment(deps, doc.borrowerId, String(a.repaymentId));
    }
  } catch (err) {
    if (err instanceof ToolError && err.code !== 'UNAVAILABLE') {
      await closeSigningRequest(c, doc._id, { status: 'FAILED', failureReason: err.message }, new Date(deps.nowMs()));
      return;
    }
    throw err;
  }
}

async function startRepayment(deps: AgentDeps, borrowerId: string, repaymentId: string): Promise<void> {
  try {
    await deps.temporal.workflow.start('repaymentWorkflow', {
      workflowId: repaymentWorkflowId(repaymentId),
      taskQueue: deps.env.TEMPORAL_TASK_QUEUE,
      args: [{ repaymentId }],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      typedSearchAttributes: [{ key: BorrowerIdKey, value: borrowerId }],
    });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return;
    deps.logger.warn('repayment workflow start failed', { repaymentId, error: err });
    throw new ToolError('UNAVAILABLE', 'repayment is temporarily unavailable; post the signature again shortly');
  }
}
