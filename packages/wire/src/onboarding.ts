/**
 * Borrower onboarding stages and the OAuth scopes each one unlocks (DECISIONS.md, "Agent side").
 * A borrower token may only carry the scopes of the borrower's current stage.
 */
export const SCOPES = [
  'borrower:token',
  'credit:facility:accept',
  'agent:key:register',
  'handle:claim',
  'spend:intent:create',
  'policy:evaluate',
  'signing:request',
  'repayment:execute',
] as const;
export type Scope = (typeof SCOPES)[number];

/** SIGNED_IN: the wallet proved control at sign-in, register_borrower not yet called. */
export const STAGES = ['SIGNED_IN', 'WALLET_VERIFIED', 'FACILITY_ACCEPTED', 'AGENT_KEY_REGISTERED', 'ACTIVE'] as const;
export type OnboardingStage = (typeof STAGES)[number];

const UNLOCKED_AT: Readonly<Record<Scope, OnboardingStage>> = {
  'borrower:token': 'SIGNED_IN',
  'credit:facility:accept': 'WALLET_VERIFIED',
  'agent:key:register': 'FACILITY_ACCEPTED',
  'handle:claim': 'AGENT_KEY_REGISTERED',
  'spend:intent:create': 'ACTIVE',
  'policy:evaluate': 'ACTIVE',
  'signing:request': 'ACTIVE',
  'repayment:execute': 'ACTIVE',
};

/** Scopes each tool needs, all of them together. */
export const TOOL_SCOPES = {
  register_borrower: ['borrower:token'],
  get_borrower_status: ['borrower:token'],
  accept_credit_facility: ['credit:facility:accept'],
  register_agent_key: ['agent:key:register'],
  rotate_agent_key: ['agent:key:register'],
  claim_handle: ['handle:claim'],
  prepare_x402_payment: ['spend:intent:create', 'policy:evaluate', 'signing:request'],
  execute_repayment: ['repayment:execute'],
} as const satisfies Record<string, readonly Scope[]>;
export type ToolName = keyof typeof TOOL_SCOPES;

export function stageIndex(stage: OnboardingStage): number {
  return STAGES.indexOf(stage);
}

export function isStage(s: unknown): s is OnboardingStage {
  return typeof s === 'string' && (STAGES as readonly string[]).includes(s);
}

export function isScope(s: unknown): s is Scope {
  return typeof s === 'string' && (SCOPES as readonly string[]).includes(s);
}

/** Every scope a token may carry at `stage`, in SCOPES order. */
export function scopesForStage(stage: OnboardingStage): Scope[] {
  return SCOPES.filter((s) => stageIndex(UNLOCKED_AT[s]) <= stageIndex(stage));
}

/** The scopes `tool` needs that `granted` lacks (empty when the call may proceed). */
export function missingScopes(tool: ToolName, granted: Iterable<string>): Scope[] {
  const have = new Set(granted);
  return TOOL_SCOPES[tool].filter((s) => !have.has(s));
}

/** Parses an OAuth `scope` string (space separated), keeping only scopes this service knows. */
export function parseScopeString(scope: unknown): Scope[] {
  if (typeof scope !== 'string') return [];
  return [...new Set(scope.split(' ').filter(isScope))];
}
