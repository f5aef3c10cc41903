import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { getAddress, verifyTypedData, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { facilityAcceptanceTypedData, typedDataToJson } from '../../src/domain/typed-data.js';
import type { SigningRequestDoc } from '../../src/store/documents.js';
import { openBrowser, type BrowserHandle } from '../support/browser.js';
import { world, type World } from '../helpers/world.js';

describe('borrower signing page and its JSON API', function () {
  this.timeout(120_000);
  let w: World;
  let origin: string;
  let browser: BrowserHandle | undefined;

  before(async function () {
    w = await world();
    origin = new URL(w.baseUrl).origin;
    browser = await openBrowser();
  });

  after(async function () {
    await browser?.close();
  });

  /** A pending FacilityAcceptance request, written the way the facility tool writes one. */
  async function pendingRequest(wallet: Hex, opts: { expiresInMs?: number } = {}): Promise<SigningRequestDoc> {
    const now = Date.now();
    const borrowerId = randomUUID();
    const td = facilityAcceptanceTypedData(
      { chainId: Number(w.env.CHAIN_ID), verifyingContract: w.settlement },
      {
        borrowerId,
        wallet,
        creditLimit: 1_000_000_000n,
        asset: w.asset,
        termsHash: `0x${'ab'.repeat(32)}`,
        nonce: `0x${randomUUID().replaceAll('-', '').padStart(64, '0')}`,
        deadline: Math.floor(now / 1000) + 900,
      },
    );
    const doc: SigningRequestDoc = {
      _id: randomUUID(),
      borrowerId,
      kind: 'facility_acceptance',
      typedData: typedDataToJson(td),
      wallet: wallet.toLowerCase(),
      status: 'PENDING',
      action: { creditLimit: '1000000000' },
      expiresAt: new Date(now + (opts.expiresInMs ?? 15 * 60_000)),
      createdAt: new Date(now),
      updatedAt: new Date(now),
    };
    await w.store.c.signingRequests.insertOne(doc);
    return doc;
  }

  async function api(method: string, path: string, body?: unknown) {
    const res = await fetch(`${origin}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: res.status, json: (await res.json()) as any };
  }

  it('shows a pending request and refuses bad, foreign and late signatures in the API error shape', async function () {
    const key = generatePrivateKey();
    const owner = privateKeyToAccount(key);
    const doc = await pendingRequest(owner.address);

    const view = await api('GET', `/borrower/api/signing-requests/${doc._id}`);
    assert.equal(view.status, 200);
    assert.equal(view.json.kind, 'facility_acceptance');
    assert.equal(view.json.wallet, owner.address.toLowerCase());
    assert.deepEqual(view.json.typed_data, doc.typedData);
    assert.equal(view.json.expires_at, doc.expiresAt.toISOString());
    assert.equal(typeof view.json.summary, 'string');

    const notHex = await api('POST', `/borrower/api/signing-requests/${doc._id}/signature`, { signature: 'nope' });
    assert.equal(notHex.status, 400);
    assert.equal(notHex.json.error.code, 'INVALID_REQUEST');
    assert.equal(notHex.json.error.fields[0].path, 'signature');

    const stranger = privateKeyToAccount(generatePrivateKey());
    const { EIP712Domain: _d, ...types } = doc.typedData.types as Record<string, unknown>;
    const foreign = await stranger.signTypedData({ ...(doc.typedData as any), types });
    const refused = await api('POST', `/borrower/api/signing-requests/${doc._id}/signature`, { signature: foreign });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.error.code, 'INVALID_REQUEST');
    assert.equal(refused.json.error.reason, 'SIGNATURE_INVALID');
    assert.equal(typeof refused.json.error.requestId, 'string');

    const late = await pendingRequest(owner.address, { expiresInMs: -1000 });
    const lateSig = await owner.signTypedData({ ...(late.typedData as any), types });
    const closed = await api('POST', `/borrower/api/signing-requests/${late._id}/signature`, { signature: lateSig });
    assert.equal(closed.status, 409);
    assert.equal(closed.json.error.reason, 'SIGNING_REQUEST_CLOSED');

    assert.equal((await api('GET', `/borrower/api/signing-requests/${randomUUID()}`)).status, 404);
    assert.equal((await api('GET', '/borrower/api/signing-requests/not-a-uuid')).json.error.code, 'NOT_FOUND');
    const badPage = await fetch(`${origin}/borrower/sign/not-a-uuid`);
    assert.equal(badPage.status, 404);
    assert.match(badPage.headers.get('content-type') ?? '', /text\/html/);
  });

  it('the page signs with the connected wallet and the server records that signature', async function () {
    const key = generatePrivateKey();
    const { page, wallet } = await browser!.newWalletPage(key);
    const doc = await pendingRequest(wallet.address);

    await page.goto(`${origin}/borrower/sign/${doc._id}`);
    await page.waitForSelector('#sign:not([disabled])');
    assert.equal(await page.textContent('#wallet'), wallet.address.toLowerCase());
    await page.click('#sign');
    // What happens after the signature (here: no onboarding workflow, so the action fails) is the
    // signing service's business; the page must deliver a valid signature and show the outcome.
    await page.waitForSelector('#status.ok, #status.error');
    assert.ok(((await page.textContent('#status')) ?? '').length > 0);

    const stored = await w.store.c.signingRequests.findOne({ _id: doc._id });
    assert.ok(stored?.signature, 'the signature reached the server');
    assert.notEqual(stored.status, 'PENDING');
    const { EIP712Domain: _d, ...types } = doc.typedData.types as Record<string, unknown>;
    assert.ok(await verifyTypedData({ ...(doc.typedData as any), types, address: getAddress(wallet.address), signature: stored.signature as Hex }));
  });

  it('the page refuses to sign from a wallet other than the requested one', async function () {
    const { page } = await browser!.newWalletPage(generatePrivateKey());
    const doc = await pendingRequest(privateKeyToAccount(generatePrivateKey()).address);
    await page.goto(`${origin}/borrower/sign/${doc._id}`);
    await page.waitForSelector('#sign:not([disabled])');
    await page.click('#sign');
    await page.waitForSelector('#status.error');
    assert.match((await page.textContent('#status')) ?? '', /must be signed by/);
    assert.equal((await w.store.c.signingRequests.findOne({ _id: doc._id }))?.status, 'PENDING');
  });
});
