export const INVALID_REASONS = [
  'invalid_x402_version',
  'unsupported_scheme',
  'invalid_network',
  'invalid_asset',
  'invalid_payload',
  'invalid_payment_requirements',
  'amount_mismatch',
  'recipient_mismatch',
  'voucher_expired',
  'voucher_not_yet_valid',
  'invalid_signature',
  'unknown_agent_key',
  'agent_key_revoked',
  'unknown_spend_intent',
  'voucher_already_used',
  'insufficient_credit',
  'borrower_not_active',
  'policy_denied',
] as const;

export type InvalidReason = (typeof INVALID_REASONS)[number];

const MESSAGES: Record<InvalidReason, string> = {
  invalid_x402_version: 'x402Version must be 2. Resend the payment as an x402 v2 credit envelope.',
  unsupported_scheme:
    'This facilitator settles only the "credit" scheme. Ask the agent to pay with a credit voucher.',
  invalid_network:
    'The payment names a network this facilitator does not settle on. Advertise and pay on the network listed by GET /supported.',
  invalid_asset:
    'The payment names an asset this facilitator does not settle. Advertise and pay in the asset listed by GET /supported.',
  invalid_payload:
    'paymentPayload.payload must be {voucher, signature} with a well-formed voucher and a base64url Ed25519 signature. Ask the agent to prepare a new payment.',
  invalid_payment_requirements:
    'The payment requirements are malformed. Send scheme, network, asset, amount, payTo and maxTimeoutSeconds as advertised on your 402.',
  amount_mismatch:
    'The voucher amount differs from the advertised amount. Ask the agent to prepare a payment for the advertised amount.',
  recipient_mismatch:
    'The voucher pays another merchant or payout address. Check the payTo you advertise matches your registered payout address, then ask the agent to pay again.',
  voucher_expired: 'The voucher has expired. Ask the agent to prepare a new payment.',
  voucher_not_yet_valid:
    'The voucher is dated in the future. Check the agent host clock, then ask the agent to prepare a new payment.',
  invalid_signature:
    'The voucher signature does not verify under the agent key. Ask the agent to prepare and sign the payment again.',
  unknown_agent_key:
    'No agent key is registered for this borrower and operational agent. The borrower must register an agent key before paying.',
  agent_key_revoked:
    'The voucher was signed with a revoked agent key. The agent must sign with its current key.',
  unknown_spend_intent:
    'No open spend intent matches this voucher (unknown, released, expired or with different terms). Ask the agent to prepare a new payment.',
  voucher_already_used:
    'This voucher has already been captured. Poll the original payment, or ask the agent for a new payment.',
  insufficient_credit:
    'The borrower does not have enough available credit for this payment. The borrower must repay or raise the limit first.',
  borrower_not_active:
    'The borrower is not active and cannot spend. The borrower must finish onboarding or resolve the account status.',
  policy_denied:
    'The payment breaks the borrower\'s spending policy (for example voucher lifetime or limits). Ask the agent to prepare a payment within policy.',
};

export function invalidReasonMessage(r: InvalidReason): string {
  return MESSAGES[r];
}

export function isInvalidReason(s: unknown): s is InvalidReason {
  return typeof s === 'string' && (INVALID_REASONS as readonly string[]).includes(s);
}
