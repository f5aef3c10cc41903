/**
 * A node's refusal of a transaction broadcast again that says it already has it: in its mempool
 * ("already known", "already imported") or mined ("nonce too low"). Nothing to do then.
 */
export function refusedAsAlreadyHeld(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    const text = `${e.message} ${(e as { details?: unknown }).details ?? ''}`;
    if (/already (known|imported)|known transaction|nonce (is )?too low/i.test(text)) return true;
  }
  return false;
}
