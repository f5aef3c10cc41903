import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../src/main/app-deps.js';
import { acceptCreditFacility } from '../../src/agents/facility.js';
import { agentDeps, onboardBorrower, signStep } from '../helpers/onboarding.js';
import { otherSignatureForms } from '../helpers/signature-forms.js';
import { world, type World } from '../helpers/world.js';

describe('signing page: only the canonical 65-byte low-s signature the token contract accepts', function () {
  this.timeout(120_000);
  let w: World;
  let deps: AppDeps;

  before(async function () {
    w = await world();
    deps = await agentDeps(w);
  });

  it('refuses the high-s twin, the EIP-2098 compact form and v 0/1 with SIGNATURE_INVALID, then takes the canonical one', async function () {
    const b = await onboardBorrower(w, { until: 'WALLET_VERIFIED' });
    const step = await acceptCreditFacility(deps, b.principal, { idempotency_key: randomUUID() });
    const low = await signStep(b.wallet, step);
    const url = `${new URL(w.baseUrl).origin}/borrower/api/signing-requests/${step.signing_request_id}/signature`;
    const post = async (signature: string) => {
      const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signature }) });
      return { status: r.status, json: (await r.json()) as { status?: string; error?: { reason?: string } } };
    };

    for (const [form, other] of Object.entries(otherSignatureForms(low))) {
      const a = await post(other);
      assert.deepEqual([a.status, a.json.error?.reason], [400, 'SIGNATURE_INVALID'], `${form}: ${JSON.stringify(a)}`);
      const stored = await w.store.c.signingRequests.findOne({ _id: step.signing_request_id });
      assert.equal(stored?.status, 'PENDING', `${form} recorded nothing`);
    }
    const ok = await post(low);
    assert.deepEqual([ok.status, ok.json.status], [200, 'completed'], JSON.stringify(ok));
    const stored = await w.store.c.signingRequests.findOne({ _id: step.signing_request_id });
    assert.equal(stored?.signature, low.toLowerCase());
  });
});
