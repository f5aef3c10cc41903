import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import type { Network } from '@x402/core/types';
import { CreditFacilitatorClient, CreditSchemeServer, type ClientLogger } from '@credit-facilitator/x402-credit';

/** README.md "Using the x402 reference SDKs", merchant side, as a program: the stock @x402/express paywall selling credit. */
export interface ExpressMerchantConfig {
  /** The facilitator's {base_url}, ending in /api/v1. */
  facilitatorUrl: string;
  apiKey: string;
  merchantId: string;
  payTo: string;
  /** In USD, e.g. "$0.42" (or a number of dollars). */
  price: string;
  network?: Network;
  host?: string;
  port?: number;
  logger?: ClientLogger;
}

export interface ExpressMerchant {
  url: string;
  close(): Promise<void>;
}

export async function startExpressMerchant(c: ExpressMerchantConfig): Promise<ExpressMerchant> {
  const network = c.network ?? 'eip155:84532';
  const facilitator = new CreditFacilitatorClient({ baseUrl: c.facilitatorUrl, apiKey: c.apiKey, merchantId: c.merchantId, waitFor: 'confirmed', ...(c.logger ? { logger: c.logger } : {}) });
  const server = new x402ResourceServer(facilitator).register(network, new CreditSchemeServer({ merchantId: c.merchantId, facilitatorUrl: c.facilitatorUrl }));
  const app = express();
  app.use(paymentMiddleware({ 'GET /premium/:item': { accepts: { scheme: 'credit', network, payTo: c.payTo, price: c.price }, description: 'A premium item' } }, server));
  app.get('/premium/:item', (req, res) => {
    res.json({ item: req.params.item, content: 'the premium content' });
  });
  const listening = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(c.port ?? 8411, c.host ?? '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const { port } = listening.address() as AddressInfo;
  return {
    url: `http://${c.host ?? '127.0.0.1'}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        listening.close(() => resolve());
        listening.closeAllConnections();
      }),
  };
}
