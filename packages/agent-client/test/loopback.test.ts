import assert from 'node:assert/strict';
import { startLoopbackReceiver, AuthorizationDeniedError } from '@credit-facilitator/agent-client/loopback';

describe('agent-client/loopback receiver', () => {
  it('delivers the code of a redirect carrying the expected state, refusing others', async () => {
    const r = await startLoopbackReceiver({ expectedState: () => 'st-1' });
    try {
      assert.match(r.redirectUrl, /^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const waiting = r.waitForCode(5000);
      const forged = await fetch(`${r.redirectUrl}?code=evil&state=other`);
      assert.equal(forged.status, 400);
      const wrongPath = await fetch(r.redirectUrl.replace('/callback', '/elsewhere') + '?code=x&state=st-1');
      assert.equal(wrongPath.status, 404);
      const ok = await fetch(`${r.redirectUrl}?code=good-code&state=st-1`);
      assert.equal(ok.status, 200);
      assert.equal(await waiting, 'good-code');
    } finally {
      await r.close();
    }
  });

  it('keeps a code that arrives before anyone waits, and reports a denied authorization', async () => {
    const r = await startLoopbackReceiver();
    try {
      await fetch(`${r.redirectUrl}?code=early`);
      assert.equal(await r.waitForCode(1000), 'early');
      const denied = assert.rejects(r.waitForCode(5000), (e: unknown) => e instanceof AuthorizationDeniedError && e.error === 'access_denied');
      await fetch(`${r.redirectUrl}?error=access_denied&error_description=no`);
      await denied;
      await assert.rejects(r.waitForCode(50), /no sign-in/);
    } finally {
      await r.close();
    }
  });
});
