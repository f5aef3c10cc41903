import assert from 'node:assert/strict';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { MerchantCache } from '../../src/store/merchant-cache.js';
import { revokeApiKey } from '../../src/store/merchants.js';
import { newMerchant, type ProvisionedMerchant } from '../../tools/harness/merchants.js';
import { recordStoreCommands } from '../helpers/store-commands.js';
import { world, type World } from '../helpers/world.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The merchant-auth cache on the real store: what it costs under steady use, and how fast a revocation lands. */
describe('merchant auth cache: entries in use are refreshed together, within the same bound', function () {
  let w: World;
  let merchants: ProvisionedMerchant[];
  before(async function () {
    w = await world();
    merchants = await Promise.all(Array.from({ length: 20 }, (_, i) => newMerchant(w, `Cache ${i + 1}`)));
  });

  it('twenty merchants authenticating steadily for 2 s cost a refresh per collection, not a read per merchant and ttl', async function () {
    const ttlMs = 400;
    const cache = new MerchantCache(ttlMs);
    try {
      const commands = await recordStoreCommands(w, async (c) => {
        const until = Date.now() + 2000;
        while (Date.now() < until) {
          for (const m of merchants) {
            const key = await cache.findLiveApiKey(c, hashApiKey(m.apiKey));
            assert.equal(key?.merchantId, m.merchantId);
            assert.equal((await cache.find(c, m.merchantId))?._id, m.merchantId);
          }
          await sleep(20);
        }
      });
      const reads = commands.filter((x) => x.name === 'find' && (x.collection === 'merchants' || x.collection === 'api_keys'));
      // Reading each entry whenever it expired: 20 merchants x 2 collections x (2000 / 400) = 200 reads.
      // Refreshing: 40 first reads, then 2 commands every 200 ms (about 20), with slack for a slow box.
      assert.ok(reads.length <= 80, `${reads.length} reads of merchants and api_keys in 2 s`);
    } finally {
      cache.close();
    }
  });

  it('a revoked key stops authenticating within the ttl plus one refresh, though it is in use all along', async function () {
    const ttlMs = 400;
    const cache = new MerchantCache(ttlMs);
    const m = await newMerchant(w, 'Cache revoked');
    const hash = hashApiKey(m.apiKey);
    try {
      assert.ok(await cache.findLiveApiKey(w.store.c, hash));
      await sleep(300);
      assert.ok(await cache.findLiveApiKey(w.store.c, hash), 'in use and refreshed');
      assert.ok(await revokeApiKey(w.store.c, m.merchantId, m.keyId, new Date()));
      const revokedAt = Date.now();
      for (;;) {
        if ((await cache.findLiveApiKey(w.store.c, hash)) === null) break;
        assert.ok(Date.now() - revokedAt < ttlMs + 1500, 'the revoked key still authenticates past the bound');
        await sleep(10);
      }
    } finally {
      cache.close();
    }
  });
});
