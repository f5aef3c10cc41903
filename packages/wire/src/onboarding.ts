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

/** What the borrower does next at each stage, naming the tool; null once ACTIVE. */
export const NEXT_ONBOARDING_STEP: Readonly<Record<OnboardingStage, string | null>> = {
  SIGNED_IN: 'register the borrower with register_borrower',
  WALLET_VERIFIED: 'accept the credit facility with accept_credit_facility',
  FACILITY_ACCEPTED: 'register the workload key with register_agent_key',
  AGENT_KEY_REGISTERED: 'claim a handle with claim_handle',
  ACTIVE: null,
};

/** The stage at which every scope `tool` needs is unlocked. */
export function stageForTool(tool: ToolName): OnboardingStage {
  return TOOL_SCOPES[tool].map((s) => UNLOCKED_AT[s]).reduce((a, b) => (stageIndex(b) > stageIndex(a) ? b : a), STAGES[0]);
}

/** The latest stage whose scopes `granted` all holds (a token carries its stage's scopes). */
export function stageOfScopes(granted: Iterable<string>): OnboardingStage {
  const have = new Set(granted);
  return STAGES.filter((stage) => scopesForStage(stage).every((s) => have.has(s))).at(-1) ?? STAGES[0];
}

/**
 * Why `tool` is refused at `stage`, and the onboarding step that opens it; undefined when the
 * stage already allows the tool (then only the token is behind: refresh it).
 */
export function onboardingShortfall(tool: ToolName, stage: OnboardingStage): string | undefined {
  const needed = stageForTool(tool);
  const next = NEXT_ONBOARDING_STEP[stage];
  if (stageIndex(stage) >= stageIndex(needed) || next === null) return undefined;
  return `${tool} opens at onboarding stage ${needed} and the borrower is at ${stage}: next, ${next}`;
}
