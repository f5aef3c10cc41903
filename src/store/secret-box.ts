import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataDir as resolveDataDir } from '../config/paths.js';

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Seals secrets the product must keep readable to use them (webhook signing secrets) with
 * AES-256-GCM under a key that never enters the store: a copy of the database alone does not
 * reveal them. The key is SECRETS_ENCRYPTION_KEY (base64url, 32 bytes) or, on the embedded stack,
 * DATA_DIR/secrets.key (made once by ensureSecretsKeyFile). Without a key, values are stored as
 * they are; values stored before sealing existed are read as they are.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer | null) {}

  static of(env: { SECRETS_ENCRYPTION_KEY?: string | undefined; DATA_DIR: string }): SecretBox {
    const raw = env.SECRETS_ENCRYPTION_KEY ?? readKeyFile(env.DATA_DIR);
    if (raw === undefined) return new SecretBox(null);
    const key = Buffer.from(raw.trim(), 'base64url');
    if (key.length !== 32) throw new Error('SECRETS_ENCRYPTION_KEY must be 32 bytes, base64url');
    return new SecretBox(key);
  }

  get sealing(): boolean {
    return this.key !== null;
  }

  seal(plain: string): string {
    if (!this.key) return plain;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64url');
  }

  open(stored: string): string {
    if (!stored.startsWith(PREFIX)) return stored;
    if (!this.key) throw new Error('a sealed secret needs SECRETS_ENCRYPTION_KEY (or DATA_DIR/secrets.key)');
    const blob = Buffer.from(stored.slice(PREFIX.length), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', this.key, blob.subarray(0, IV_BYTES));
    decipher.setAuthTag(blob.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(blob.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

const KEY_FILE = 'secrets.key';

function readKeyFile(dataDir: string): string | undefined {
  const file = join(resolveDataDir(dataDir), KEY_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** The embedded stack's sealing key, made once per DATA_DIR (mode 0600; backups copy it with the data). */
export function ensureSecretsKeyFile(dataDir: string): void {
  const file = join(dataDir, KEY_FILE);
  if (existsSync(file)) return;
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, randomBytes(32).toString('base64url') + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}
