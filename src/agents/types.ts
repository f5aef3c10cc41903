import type { Scope } from '@credit-facilitator/wire/onboarding';

/** Who is calling a tool: from a verified borrower token, never from tool input. */
export interface BorrowerPrincipal {
  borrowerId: string;
  clientId: string;
  scopes: Scope[];
  /** Token expiry, unix seconds. */
  expiresAt: number;
}

export type SigningStatus = 'signature_required' | 'processing' | 'completed' | 'failed' | 'expired';

/** What a tool returns for a step the borrower's wallet must sign. Re-calling with the same idempotency_key returns its current state. */
export interface SigningStep {
  status: SigningStatus;
  signing_request_id: string;
  /** Our signing page; the borrower opens it and signs in their own wallet. */
  signing_url: string;
  /** The raw EIP-712 typed data (JSON, bigints as strings), for hosts that can ask the wallet directly. */
  typed_data: Record<string, unknown>;
  expires_at: string;
  result?: Record<string, unknown>;
  failure_reason?: string;
}
