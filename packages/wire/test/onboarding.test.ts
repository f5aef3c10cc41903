import assert from 'node:assert/strict';
import { onboardingShortfall, scopesForStage, stageForTool, stageOfScopes, STAGES } from '@credit-facilitator/wire/onboarding';

describe('wire: onboarding stages', () => {
  it('reads the stage off a token\'s scopes and the stage each tool opens at', () => {
    for (const stage of STAGES) assert.equal(stageOfScopes(scopesForStage(stage)), stage);
    assert.equal(stageOfScopes([]), 'SIGNED_IN');
    assert.equal(stageForTool('claim_handle'), 'AGENT_KEY_REGISTERED');
    assert.equal(stageForTool('prepare_x402_payment'), 'ACTIVE');
  });

  it('names the next step for a tool the stage does not open yet', () => {
    assert.equal(onboardingShortfall('prepare_x402_payment', 'AGENT_KEY_REGISTERED'), 'prepare_x402_payment opens at onboarding stage ACTIVE and the borrower is at AGENT_KEY_REGISTERED: next, claim a handle with claim_handle');
    assert.match(onboardingShortfall('register_agent_key', 'WALLET_VERIFIED') ?? '', /next, accept the credit facility with accept_credit_facility$/);
    assert.equal(onboardingShortfall('prepare_x402_payment', 'ACTIVE'), undefined);
    assert.equal(onboardingShortfall('claim_handle', 'ACTIVE'), undefined);
  });
});
