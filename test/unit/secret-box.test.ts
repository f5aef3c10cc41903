import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSecretsKeyFile, SecretBox } from '../../src/store/secret-box.js';

describe('store/secret-box', function () {
  const key = randomBytes(32).toString('base64url');

  it('seals so the stored value reveals nothing, and opens it again', function () {
    const box = SecretBox.of({ SECRETS_ENCRYPTION_KEY: key, DATA_DIR: '/nonexistent' });
    const sealed = box.seal('whsec_abc');
    assert.match(sealed, /^enc:v1:/);
    assert.ok(!sealed.includes('whsec_abc'));
    assert.notEqual(box.seal('whsec_abc'), sealed, 'a fresh IV each time');
    assert.equal(box.open(sealed), 'whsec_abc');
  });

  it('refuses a tampered value or another key, reads legacy plaintext as is', function () {
    const box = SecretBox.of({ SECRETS_ENCRYPTION_KEY: key, DATA_DIR: '/nonexistent' });
    const sealed = box.seal('whsec_abc');
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === 'A' ? 'B' : 'A') + sealed.at(-1);
    assert.throws(() => box.open(flipped));
    assert.throws(() => SecretBox.of({ SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64url'), DATA_DIR: '/x' }).open(sealed));
    assert.equal(box.open('whsec_legacy'), 'whsec_legacy');
    assert.throws(() => SecretBox.of({ DATA_DIR: '/nonexistent' }).open(sealed), /SECRETS_ENCRYPTION_KEY/);
    assert.throws(() => SecretBox.of({ SECRETS_ENCRYPTION_KEY: 'short', DATA_DIR: '/x' }), /32 bytes/);
  });

  it('the embedded stack keeps its key in DATA_DIR/secrets.key (0600), made once', function () {
    const dir = mkdtempSync(join(tmpdir(), 'secret-box-'));
    try {
      assert.equal(SecretBox.of({ DATA_DIR: dir }).sealing, false);
      ensureSecretsKeyFile(dir);
      const first = readFileSync(join(dir, 'secrets.key'), 'utf8');
      ensureSecretsKeyFile(dir);
      assert.equal(readFileSync(join(dir, 'secrets.key'), 'utf8'), first);
      assert.equal(statSync(join(dir, 'secrets.key')).mode & 0o777, 0o600);
      const box = SecretBox.of({ DATA_DIR: dir });
      assert.equal(box.sealing, true);
      assert.equal(box.open(box.seal('s')), 's');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
