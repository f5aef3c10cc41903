import type { PrivateKeyAccount } from 'viem';
import { typedDataFromJson } from '../../src/agents/signing.js';

/**
 * The borrower page's wallet sign-in without a browser, as its script does it: the challenge (and
 * its cookie), the wallet's WalletProof signature, then the session cookie. Returns its value.
 */
export async function borrowerPageSession(origin: string, wallet: PrivateKeyAccount): Promise<string> {
  const challenge = await fetch(`${origin}/borrower/api/session/challenge?wallet=${wallet.address}`);
  if (challenge.status !== 200) throw new Error(`challenge: ${challenge.status} ${await challenge.text()}`);
  const { typed_data, issued_at } = (await challenge.json()) as { typed_data: Record<string, unknown>; issued_at: number };
  const signInCookie = challenge.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const signature = await wallet.signTypedData(typedDataFromJson(typed_data) as Parameters<PrivateKeyAccount['signTypedData']>[0]);
  const res = await fetch(`${origin}/borrower/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, cookie: signInCookie },
    body: JSON.stringify({ wallet: wallet.address, signature, issuedAt: issued_at }),
  });
  if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${await res.text()}`);
  const session = res.headers.getSetCookie().map((c) => /^borrower_session=([^;]+)/.exec(c)?.[1]).find((v) => v);
  if (!session) throw new Error('sign-in set no borrower_session cookie');
  return session;
}
