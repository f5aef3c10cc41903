/** What an agent lets paid MCP calls spend, in base units of the settlement asset. */
export interface McpBudgetLimits {
  /** No single call may cost more. */
  maxPerCall?: string;
  /** All calls through this client together may not cost more. */
  maxTotal?: string;
}

export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
  constructor(
    readonly code: 'over_per_call' | 'over_total',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Counts what paid calls reserved. A call reserves its price before it signs, so concurrent calls
 * cannot overspend together; a payment the server refused before charging is released.
 */
export class McpBudget {
  #spent = 0n;
  constructor(readonly limits: McpBudgetLimits = {}) {}

  get spent(): string {
    return this.#spent.toString();
  }

  reserve(amount: string): void {
    const a = BigInt(amount);
    if (this.limits.maxPerCall !== undefined && a > BigInt(this.limits.maxPerCall)) {
      throw new BudgetExceededError('over_per_call', `the call costs ${amount}, above the per-call limit ${this.limits.maxPerCall}`);
    }
    if (this.limits.maxTotal !== undefined && this.#spent + a > BigInt(this.limits.maxTotal)) {
      throw new BudgetExceededError('over_total', `the call costs ${amount}; ${this.#spent} of the total ${this.limits.maxTotal} is already spent`);
    }
    this.#spent += a;
  }

  release(amount: string): void {
    this.#spent -= BigInt(amount);
  }
}
