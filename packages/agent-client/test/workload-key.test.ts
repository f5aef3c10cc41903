import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateWorkloadKey, loadOrCreateWorkloadKey, loadWorkloadKey, saveWorkloadKey, WorkloadKeyError } from '@credit-facilitator/agent-client/workload-key';
import { signVoucher, verifyVoucherSignature } from '@credit-facilitator/wire/voucher';
import { sampleVoucher } from '@credit-facilitator/wire/testing';

describe('agent-client/workload-key', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'workload-key-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('saves with mode 0600 and loads the same key back', async () => {
    const path = join(dir, 'nested', 'agent.key');
    const key = generateWorkloadKey();
    await saveWorkloadKey(path, key);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    const loaded = await loadWorkloadKey(path);
    assert.deepEqual(loaded.privateKey, key.privateKey);
    assert.equal(loaded.publicKeyBase64Url, key.publicKeyBase64Url);
    const v = sampleVoucher();
    assert.equal(verifyVoucherSignature(v, signVoucher(v, loaded.privateKey), key.publicKey), true);
  });

  it('refuses to overwrite an existing key unless asked', async () => {
    const path = join(dir, 'agent.key');
    await saveWorkloadKey(path, generateWorkloadKey());
    await assert.rejects(saveWorkloadKey(path, generateWorkloadKey()), WorkloadKeyError);
    const replacement = generateWorkloadKey();
    await saveWorkloadKey(path, replacement, { overwrite: true });
    assert.equal((await loadWorkloadKey(path)).publicKeyBase64Url, replacement.publicKeyBase64Url);
  });

  it('refuses a key file others can read', async () => {
    const path = join(dir, 'agent.key');
    await saveWorkloadKey(path, generateWorkloadKey());
    chmodSync(path, 0o644);
    await assert.rejects(loadWorkloadKey(path), /readable by others/);
  });

  it('refuses a file whose public key does not belong to its private key', async () => {
    const path = join(dir, 'agent.key');
    await saveWorkloadKey(path, generateWorkloadKey());
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    doc.public_key = generateWorkloadKey().publicKeyBase64Url;
    writeFileSync(path, JSON.stringify(doc), { mode: 0o600 });
    await assert.rejects(loadWorkloadKey(path), /does not belong/);
  });

  it('creates a key on first use and returns the same one after', async () => {
    const path = join(dir, 'agent.key');
    const first = await loadOrCreateWorkloadKey(path);
    assert.equal(first.created, true);
    const second = await loadOrCreateWorkloadKey(path);
    assert.equal(second.created, false);
    assert.equal(second.key.publicKeyBase64Url, first.key.publicKeyBase64Url);
  });
});
