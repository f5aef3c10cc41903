import { randomUUID } from 'node:crypto';
import type { AssetAmount, Network, PaymentFlowConfig, PaymentRequirements, Price, SchemeNetworkServer, SupportedKind } from '@x402/core/types';
import { convertToTokenAmount, parseMoney } from '@x402/core/utils';

export interface CreditSchemeServerOptions {
  /** The merchant's id at the facilitator (accepts[].extra.merchantId). */
  merchantId: string;
  /** Advertised as accepts[].extra.facilitator (the facilitator's {base_url}). */
  facilitatorUrl?: string;
  /** A fresh order reference per 402; default `order-<uuid>`. A route's static extra.orderRef wins. */
  newOrderRef?: () => string;
}

interface AssetInfo {
  asset: string;
  decimals: number;
}

const AUTHORIZATION_ONLY: PaymentFlowConfig = { supported: ['authorization'], default: 'authorization' };

/**
 * The `credit` scheme for @x402/core's x402ResourceServer: builds the accepts entry our
 * facilitator and agents expect (asset from GET /facilitator/supported, lowercase addresses,
 * extra {merchantId, orderRef, facilitator}). Flow "authorization": verify before the handler,
 * capture after it, so a failing handler never charges the borrower.
 */
export class CreditSchemeServer implements SchemeNetworkServer {
  readonly scheme = 'credit';
  readonly defaultAssetTransferMethod = 'default';
  readonly paymentFlows = { default: AUTHORIZATION_ONLY };
  /** Each 402 names a new order; the paid request's rebuilt requirements carry yet another one, so matching ignores it. */
  readonly dynamicExtraFields = ['orderRef'];
  readonly #opts: CreditSchemeServerOptions;
  readonly #assets = new Map<string, AssetInfo>();

  constructor(opts: CreditSchemeServerOptions) {
    if (!/^[0-9a-fA-F-]{36}$/.test(opts.merchantId)) throw new Error('CreditSchemeServer: merchantId must be the merchant UUID');
    this.#opts = { ...opts, merchantId: opts.merchantId.toLowerCase() };
  }

  /** Called by x402ResourceServer.initialize() with the facilitator's kind: remembers the settlement asset. */
  validateFacilitatorSupport(network: Network, kind: SupportedKind): string | void {
    const info = assetInfo(kind);
    if (!info) return 'the facilitator advertises no settlement asset (extra.asset, extra.decimals) for credit';
    this.#assets.set(kind.network, info);
    if (network !== kind.network) this.#assets.set(network, info);
  }

  /** "$0.25" / 0.25 in the settlement asset (a USD stablecoin), or {amount, asset} in base units. */
  async parsePrice(price: Price, network: Network): Promise<AssetAmount> {
    if (typeof price === 'object') {
      if (!/^[0-9]{1,78}$/.test(price.amount)) throw new Error('credit: price.amount must be a whole number of base units');
      return { amount: price.amount, asset: price.asset.toLowerCase(), ...(price.extra ? { extra: price.extra } : {}) };
    }
    const info = this.#assets.get(network);
    if (!info) throw new Error(`credit: no settlement asset known for ${network} yet (initialize the resource server first)`);
    const money = parseMoney(price);
    if (money.symbol !== undefined) throw new Error(`credit: prices are in USD, not ${money.symbol}`);
    return { amount: convertToTokenAmount(money.amount, info.decimals), asset: info.asset };
  }

  getAssetDecimals(asset: string, network: Network): number | undefined {
    const info = this.#assets.get(network);
    return info && info.asset === asset.toLowerCase() ? info.decimals : undefined;
  }

  async enhancePaymentRequirements(requirements: PaymentRequirements, kind: SupportedKind): Promise<PaymentRequirements> {
    const info = assetInfo(kind);
    if (info) this.#assets.set(kind.network, info);
    const asset = (requirements.asset.trim() || info?.asset || '').toLowerCase();
    const extra = requirements.extra ?? {};
    return {
      ...requirements,
      asset,
      payTo: requirements.payTo.toLowerCase(),
      extra: {
        ...extra,
        merchantId: this.#opts.merchantId,
        orderRef: typeof extra.orderRef === 'string' ? extra.orderRef : (this.#opts.newOrderRef ?? defaultOrderRef)(),
        ...(this.#opts.facilitatorUrl ? { facilitator: this.#opts.facilitatorUrl } : {}),
      },
    };
  }
}

const defaultOrderRef = () => `order-${randomUUID()}`;

function assetInfo(kind: SupportedKind): AssetInfo | undefined {
  const asset = kind.extra?.asset;
  const decimals = kind.extra?.decimals;
  if (typeof asset !== 'string' || !/^0x[0-9a-fA-F]{40}$/.test(asset)) return undefined;
  return { asset: asset.toLowerCase(), decimals: typeof decimals === 'number' && Number.isInteger(decimals) ? decimals : 6 };
}
