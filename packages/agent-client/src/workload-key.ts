import { chmod, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { decodePrivateKey, decodePublicKey, encodeKey, generateAgentKeyPair, publicKeyFromPrivate } from '@credit-facilitator/wire/voucher';

/** The agent's Ed25519 workload key. It stays on the agent's machine; only `publicKey` is ever sent. */
export interface WorkloadKey {
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  /** base64url, what register_agent_key takes. */
  publicKeyBase64Url: string;
}

const KeyFileSchema = z
  .object({
    v: z.literal(1),
    kty: z.literal('Ed25519'),
    private_key: z.string(),
    public_key: z.string(),
    created_at: z.string(),
  })
  .strict();

export class WorkloadKeyError extends Error {
  override readonly name = 'WorkloadKeyError';
}

export function generateWorkloadKey(): WorkloadKey {
  const { privateKey, publicKey } = generateAgentKeyPair();
  return { privateKey, publicKey, publicKeyBase64Url: encodeKey(publicKey) };
}

export function workloadKeyFromPrivate(privateKey: Uint8Array): WorkloadKey {
  const publicKey = publicKeyFromPrivate(privateKey);
  return { privateKey, publicKey, publicKeyBase64Url: encodeKey(publicKey) };
}

/**
 * Writes the key file with mode 0600, through a temporary file and a rename so a crash never
 * leaves half a key. Refuses to replace an existing file unless `overwrite` is set.
 */
export async function saveWorkloadKey(path: string, key: WorkloadKey, opts: { overwrite?: boolean } = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  if (!opts.overwrite && (await exists(path))) throw new WorkloadKeyError(`refusing to overwrite the workload key at ${path}`);
  const body = JSON.stringify({
    v: 1,
    kty: 'Ed25519',
    private_key: encodeKey(key.privateKey),
    public_key: key.publicKeyBase64Url,
    created_at: new Date().toISOString(),
  });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fh = await open(tmp, 'wx', 0o600);
  try {
    await fh.writeFile(body + '\n', 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await chmod(tmp, 0o600); // the umask may have narrowed it further, never widened; make it exact
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Reads and checks a key file: owner-only permissions, well-formed, and the public key matches the private one. */
export async function loadWorkloadKey(path: string): Promise<WorkloadKey> {
  const info = await stat(path);
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) {
    throw new WorkloadKeyError(`the workload key at ${path} is readable by others (mode ${(info.mode & 0o777).toString(8)}); chmod 600 it`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch {
    throw new WorkloadKeyError(`the workload key at ${path} is not valid JSON`);
  }
  const parsed = KeyFileSchema.safeParse(raw);
  if (!parsed.success) throw new WorkloadKeyError(`the workload key at ${path} is malformed`);
  const privateKey = decodePrivateKey(parsed.data.private_key);
  const publicKey = decodePublicKey(parsed.data.public_key);
  if (!privateKey || !publicKey) throw new WorkloadKeyError(`the workload key at ${path} holds a malformed key`);
  const key = workloadKeyFromPrivate(privateKey);
  if (key.publicKeyBase64Url !== parsed.data.public_key) {
    throw new WorkloadKeyError(`the workload key at ${path}: public key does not belong to the private key`);
  }
  return key;
}

/** The key at `path`, generating and saving one on first use. */
export async function loadOrCreateWorkloadKey(path: string): Promise<{ key: WorkloadKey; created: boolean }> {
  if (await exists(path)) return { key: await loadWorkloadKey(path), created: false };
  const key = generateWorkloadKey();
  try {
    await saveWorkloadKey(path, key);
  } catch (err) {
    // Another process created it first: use theirs, so both sign with the registered key.
    if (err instanceof WorkloadKeyError && (await exists(path))) return { key: await loadWorkloadKey(path), created: false };
    throw err;
  }
  return { key, created: true };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
