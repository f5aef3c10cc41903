/** The text line for a SigningStep result: what the borrower or the agent must do now. */
export function summarizeSigningStep(o: Record<string, unknown>): string {
  switch (o.status) {
    case 'signature_required':
      return `Ask the borrower to open ${String(o.signing_url)} and sign in their own wallet; then call again with the same idempotency_key (optionally wait_seconds) to see completion.`;
    case 'processing':
      return 'Signed; processing. Call again with the same idempotency_key to see completion.';
    case 'completed':
      return `Completed: ${JSON.stringify(o.result ?? {})}.`;
    case 'expired':
      return 'The signing link expired unsigned. Call again with a new idempotency_key for a fresh link.';
    default:
      return `Failed: ${String(o.failure_reason ?? 'unknown reason')}.`;
  }
}
