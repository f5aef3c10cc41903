import fc from 'fast-check';
import { parseVoucher, type Voucher } from '@credit-facilitator/wire/voucher';
import { applyMutations, mutation, toJsonText } from './fuzz.js';
import { tamperedPayload, type TestBorrower, type TestVoucher } from './world.js';

/**
 * Vouchers that pass the signature check: a real prepared voucher with fields changed to other
 * well-formed values (another real id, a fresh UUID, a shifted amount or time...) or hit by the
 * generic mutations, then re-signed with the borrower's own agent key when it still parses.
 * They reach the rules behind the signature: spend intent, terms, expiry, agent key, reuse.
 */

export interface VoucherWorld {
  /** Real ids from the store (borrowers, merchants, agents, spend intents), lowercase. */
  ids: string[];
  /** Real addresses (payout addresses, the asset), lowercase. */
  addresses: string[];
  nowSeconds: number;
}

const hex = (bytes: number) => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map((a) => `0x${Buffer.from(a).toString('hex')}`);

function wellFormedPatch(vw: VoucherWorld): fc.Arbitrary<Partial<Voucher>> {
  const id = fc.oneof(fc.constantFrom(...vw.ids), fc.uuid({ version: 4 }));
  const address = fc.oneof(fc.constantFrom(...vw.addresses), hex(20));
  const time = fc.integer({ min: -100_000, max: 100_000 }).map((d) => Math.max(0, vw.nowSeconds + d));
  return fc.oneof(
    id.map((voucherId) => ({ voucherId })),
    id.map((spendIntentId) => ({ spendIntentId })),
    id.map((borrowerId) => ({ borrowerId })),
    id.map((operationalAgentId) => ({ operationalAgentId })),
    id.map((merchantId) => ({ merchantId })),
    address.map((payTo) => ({ payTo })),
    address.map((asset) => ({ asset })),
    fc.bigInt({ min: 1n, max: 2n ** 53n - 1n }).map((n) => ({ amount: n.toString() })),
    fc.constantFrom('eip155:1', 'eip155:8453', 'eip155:84532').map((network) => ({ network })),
    fc.constantFrom('http://127.0.0.1:9000/other', 'https://merchant.example/x').map((resource) => ({ resource })),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 20 }).map((orderRef) => ({ orderRef })),
    hex(32).map((nonce) => ({ nonce })),
    time.map((issuedAt) => ({ issuedAt })),
    time.map((expiresAt) => ({ expiresAt })),
  );
}

/** A capture (or, with requirements, a verify) body carrying a re-signed variant of one real voucher. */
export function resignedBody(vouchers: TestVoucher[], b: Pick<TestBorrower, 'agentPrivateKey'>, vw: VoucherWorld, withRequirements: boolean): fc.Arbitrary<string> {
  const change = fc.oneof(
    { weight: 3, arbitrary: fc.array(wellFormedPatch(vw), { minLength: 1, maxLength: 2 }).map((ps) => (v: Voucher) => Object.assign({ ...v }, ...ps) as unknown) },
    { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 2 }).map((ms) => (v: Voucher) => applyMutations(v, ms)) },
  );
  return fc.record({ v: fc.constantFrom(...vouchers), change, echo: fc.boolean() }).map(({ v, change, echo }) => {
    const raw = change(v.prepared.voucher);
    const parsed = parseVoucher(raw);
    const paymentPayload = parsed.ok
      ? tamperedPayload(v, b, () => parsed.voucher)
      : { ...v.paymentPayload, payload: { voucher: raw, signature: v.paymentPayload.payload.signature } };
    const requirements = echo ? paymentPayload.accepted : v.paymentPayload.accepted;
    return toJsonText({ x402Version: 2, paymentPayload, ...(withRequirements ? { paymentRequirements: requirements } : {}) });
  });
}
