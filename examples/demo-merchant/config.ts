import { z } from 'zod';

const intFromEnv = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

/** The demo merchant's settings (environment names as documented in README.md "Agent round trip"). */
export const DemoMerchantEnvSchema = z.object({
  DEMO_MERCHANT_HOST: z.string().default('127.0.0.1'),
  DEMO_MERCHANT_PORT: intFromEnv(8410, 0),
  /** The origin agents reach the merchant at (resource URLs); default http://{host}:{port}. */
  DEMO_MERCHANT_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .optional()
    .transform((u) => u?.replace(/\/+$/, '')),
  /** The facilitator's {base_url}, ending in /api/v1. */
  FACILITATOR_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8402/api/v1').transform((u) => u.replace(/\/+$/, '')),
  DEMO_MERCHANT_API_KEY: z.string().regex(/^sk_live_[A-Za-z0-9_-]{20,}$/, 'must be an sk_live_ API key from "npm run admin -- merchant create"'),
  DEMO_MERCHANT_ID: z.uuid().transform((s) => s.toLowerCase()),
  DEMO_MERCHANT_PAY_TO: z
    .string()
    .regex(/^0x[0-9a-fA-F]{40}$/, 'must be the merchant payout address (0x + 40 hex)')
    .transform((s) => s.toLowerCase()),
  /** Price of one item in the settlement asset's base units. */
  DEMO_PRICE: z.string().regex(/^[1-9][0-9]{0,30}$/, 'must be a positive whole number of base units').default('10000'),
  /** confirmed: deliver once settlement is CONFIRMED; captured: deliver right after capture and accept the settlement risk. */
  DEMO_DELIVERY: z.enum(['confirmed', 'captured']).default('confirmed'),
  DEMO_CONFIRM_TIMEOUT_MS: intFromEnv(30_000, 0),
  DEMO_MAX_TIMEOUT_SECONDS: intFromEnv(300, 1),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
});

export interface DemoMerchantConfig {
  host: string;
  port: number;
  publicUrl?: string;
  facilitatorUrl: string;
  apiKey: string;
  merchantId: string;
  payTo: string;
  price: string;
  delivery: 'confirmed' | 'captured';
  confirmTimeoutMs: number;
  maxTimeoutSeconds: number;
  /** How often to poll the payment while waiting for CONFIRMED. */
  pollIntervalMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
}

export class DemoMerchantConfigError extends Error {}

export function loadDemoMerchantConfig(source: NodeJS.ProcessEnv = process.env): DemoMerchantConfig {
  const r = DemoMerchantEnvSchema.safeParse(source);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new DemoMerchantConfigError(`invalid demo merchant configuration:\n${lines.join('\n')}`);
  }
  const e = r.data;
  return {
    host: e.DEMO_MERCHANT_HOST,
    port: e.DEMO_MERCHANT_PORT,
    ...(e.DEMO_MERCHANT_PUBLIC_URL ? { publicUrl: e.DEMO_MERCHANT_PUBLIC_URL } : {}),
    facilitatorUrl: e.FACILITATOR_URL,
    apiKey: e.DEMO_MERCHANT_API_KEY,
    merchantId: e.DEMO_MERCHANT_ID,
    payTo: e.DEMO_MERCHANT_PAY_TO,
    price: e.DEMO_PRICE,
    delivery: e.DEMO_DELIVERY,
    confirmTimeoutMs: e.DEMO_CONFIRM_TIMEOUT_MS,
    maxTimeoutSeconds: e.DEMO_MAX_TIMEOUT_SECONDS,
    pollIntervalMs: 500,
    logLevel: e.LOG_LEVEL,
  };
}

/** The same checks for a config built in code (tests), with the env defaults filled in. */
export function demoMerchantConfig(c: Partial<DemoMerchantConfig> & Pick<DemoMerchantConfig, 'apiKey' | 'merchantId' | 'payTo'>): DemoMerchantConfig {
  const base = loadDemoMerchantConfig({
    DEMO_MERCHANT_API_KEY: c.apiKey,
    DEMO_MERCHANT_ID: c.merchantId,
    DEMO_MERCHANT_PAY_TO: c.payTo,
    ...(c.facilitatorUrl !== undefined ? { FACILITATOR_URL: c.facilitatorUrl } : {}),
    ...(c.price !== undefined ? { DEMO_PRICE: c.price } : {}),
    ...(c.delivery !== undefined ? { DEMO_DELIVERY: c.delivery } : {}),
  });
  return {
    ...base,
    ...(c.host !== undefined ? { host: c.host } : {}),
    ...(c.port !== undefined ? { port: c.port } : {}),
    ...(c.publicUrl !== undefined ? { publicUrl: c.publicUrl.replace(/\/+$/, '') } : {}),
    ...(c.confirmTimeoutMs !== undefined ? { confirmTimeoutMs: c.confirmTimeoutMs } : {}),
    ...(c.maxTimeoutSeconds !== undefined ? { maxTimeoutSeconds: c.maxTimeoutSeconds } : {}),
    ...(c.pollIntervalMs !== undefined ? { pollIntervalMs: c.pollIntervalMs } : {}),
    ...(c.logLevel !== undefined ? { logLevel: c.logLevel } : {}),
  };
}
