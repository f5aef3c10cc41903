import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Hex } from 'viem';

/** What the page-side EIP-1193 shim receives back from Node: a result, or an EIP-1193 style error. */
export type WalletReply = { ok: true; result: unknown } | { ok: false; code: number; message: string };

/**
 * A software EIP-1193 wallet for tests: a viem local account that answers the requests our
 * pages make. `requests` records each method asked, so tests can see what the page did.
 */
export class TestWallet {
  readonly account: PrivateKeyAccount;
  readonly requests: string[] = [];

  constructor(
    privateKey: Hex,
    readonly chainId: number,
  ) {
    this.account = privateKeyToAccount(privateKey);
  }

  get address(): `0x${string}` {
    return this.account.address;
  }

  async handle(method: string, params: unknown[]): Promise<WalletReply> {
    this.requests.push(method);
    try {
      return { ok: true, result: await this.answer(method, params) };
    } catch (err) {
      const e = err as { code?: number; message?: string };
      return { ok: false, code: typeof e.code === 'number' ? e.code : -32603, message: e.message ?? String(err) };
    }
  }

  private async answer(method: string, params: unknown[]): Promise<unknown> {
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [this.address];
      case 'eth_chainId':
        return `0x${this.chainId.toString(16)}`;
      case 'wallet_switchEthereumChain': {
        const wanted = (params[0] as { chainId?: string } | undefined)?.chainId;
        if (wanted !== undefined && Number(wanted) === this.chainId) return null;
        throw Object.assign(new Error(`test wallet only knows chain ${this.chainId}`), { code: 4902 });
      }
      case 'eth_signTypedData_v4': {
        const [from, json] = params as [string, string];
        this.requireSelf(from);
        const td = JSON.parse(json) as { domain: Record<string, unknown>; types: Record<string, unknown>; primaryType: string; message: Record<string, unknown> };
        const { EIP712Domain: _domainType, ...types } = td.types;
        return this.account.signTypedData({ domain: td.domain, types, primaryType: td.primaryType, message: td.message } as Parameters<PrivateKeyAccount['signTypedData']>[0]);
      }
      case 'personal_sign': {
        const [message, from] = params as [Hex, string];
        this.requireSelf(from);
        return this.account.signMessage({ message: { raw: message } });
      }
      default:
        throw Object.assign(new Error(`test wallet does not support ${method}`), { code: 4200 });
    }
  }

  private requireSelf(from: string): void {
    if (from.toLowerCase() !== this.address.toLowerCase()) {
      throw Object.assign(new Error(`test wallet holds ${this.address}, not ${from}`), { code: 4100 });
    }
  }
}

/** Page-side shim: window.ethereum forwards every request to the exposed Node function. */
export function walletInitScript(bridgeName: string): string {
  return `(() => {
  const bridge = window[${JSON.stringify(bridgeName)}];
  const listeners = {};
  window.ethereum = {
    isTestWallet: true,
    async request({ method, params }) {
      const reply = await bridge(method, Array.isArray(params) ? params : []);
      if (reply.ok) return reply.result;
      const err = new Error(reply.message);
      err.code = reply.code;
      throw err;
    },
    on(event, fn) { (listeners[event] ||= []).push(fn); },
    removeListener(event, fn) { listeners[event] = (listeners[event] || []).filter((f) => f !== fn); },
  };
})();`;
}
