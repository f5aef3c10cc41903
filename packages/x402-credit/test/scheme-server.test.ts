import assert from 'node:assert/strict';
import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequired, SupportedKind } from '@x402/core/types';
import { CreditSchemeServer } from '@credit-facilitator/x402-credit/credit-scheme-server';
import { SAMPLE } from '@credit-facilitator/wire/testing';

const NETWORK = 'eip155:84532' as const;
const KIND: SupportedKind = { x402Version: 2, scheme: 'credit', network: NETWORK, extra: { asset: '0x00000000000000000000000000000000000000BB', decimals: 6 } };

function required(orderRef = 'order-42'): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: 'https://merchant.example/report/42', description: '', mimeType: '' },
    accepts: [
      {
        scheme: 'credit',
        network: NETWORK,
        asset: SAMPLE.asset,
        amount: '1500000',
        payTo: SAMPLE.payTo,
        maxTimeoutSeconds: 300,
        extra: { merchantId: SAMPLE.merchantId, orderRef },
      },
    ],
  };
}

describe('x402-interop: the credit scheme server plug-in', () => {
  describe('CreditSchemeServer in the stock x402ResourceServer', () => {
    const server = () => new CreditSchemeServer({ merchantId: SAMPLE.merchantId.toUpperCase(), facilitatorUrl: 'http://127.0.0.1:8402/api/v1' });

    it('learns the asset from the facilitator kind and prices "$1.50" in its base units', async () => {
      const s = server();
      assert.equal(s.validateFacilitatorSupport(NETWORK, KIND), undefined);
      assert.deepEqual(await s.parsePrice('$1.50', NETWORK), { amount: '1500000', asset: SAMPLE.asset });
      assert.deepEqual(await s.parsePrice({ amount: '42', asset: SAMPLE.asset.toUpperCase() }, NETWORK), { amount: '42', asset: SAMPLE.asset });
      assert.equal(s.getAssetDecimals(SAMPLE.asset, NETWORK), 6);
      await assert.rejects(server().parsePrice('$1', NETWORK), /initialize/);
      await assert.rejects(s.parsePrice('1 EURC', NETWORK), /USD/);
      assert.match(String(server().validateFacilitatorSupport(NETWORK, { ...KIND, extra: {} })), /no settlement asset/);
    });

    it('builds the accepts entry: lowercase addresses, merchant, facilitator and a fresh order unless the route fixes one', async () => {
      let n = 0;
      const s = new CreditSchemeServer({ merchantId: SAMPLE.merchantId, newOrderRef: () => `o-${++n}` });
      const base = { scheme: 'credit', network: NETWORK, asset: '', amount: '5', payTo: SAMPLE.payTo.toUpperCase().replace('0X', '0x'), maxTimeoutSeconds: 300, extra: {} };
      const a = await s.enhancePaymentRequirements(base, KIND);
      const b = await s.enhancePaymentRequirements(base, KIND);
      assert.deepEqual(a, { ...base, asset: SAMPLE.asset, payTo: SAMPLE.payTo, extra: { merchantId: SAMPLE.merchantId, orderRef: 'o-1' } });
      assert.equal(b.extra.orderRef, 'o-2');
      const fixed = await s.enhancePaymentRequirements({ ...base, extra: { orderRef: 'route-order' } }, KIND);
      assert.equal(fixed.extra.orderRef, 'route-order');
    });

    it('lets the paid request match although its rebuilt requirements name another order', async () => {
      const rs = new x402ResourceServer([]).register(NETWORK, server());
      const offered = required('order-from-the-402').accepts[0]!;
      const rebuilt = { ...offered, extra: { ...offered.extra, orderRef: 'order-of-this-request', facilitator: 'http://127.0.0.1:8402/api/v1' } };
      const paid: PaymentPayload = { x402Version: 2, accepted: { ...offered, extra: { ...offered.extra, facilitator: 'http://127.0.0.1:8402/api/v1' } }, payload: {} };
      assert.equal(rs.findMatchingRequirements([rebuilt], paid), rebuilt);
      const otherPrice = { ...rebuilt, amount: '1' };
      assert.equal(rs.findMatchingRequirements([otherPrice], paid), undefined);
    });
  });
});
