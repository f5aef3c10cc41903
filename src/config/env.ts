import { z } from 'zod';
import { isLoopbackHost } from '../domain/redirect-policy.js';

/**
 * Every setting the product reads from the environment, validated once at start-up.
 * Names and defaults are documented in README.md and .env.example; keep the three in step.
 */
const intFromEnv = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));
/** `scheme://host[:port]` exactly as a browser sends it in Origin, or what is wrong with `entry`. */
export function corsOriginProblem(entry: string): string | null {
  const url = URL.parse(entry);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return `${JSON.stringify(entry)} is not an http(s) origin`;
  if (url.origin !== entry) return `${JSON.stringify(entry)} is not an exact origin (scheme://host[:port], lower case, no path); did you mean ${url.origin}?`;
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return `${entry} must use https (http only on loopback hosts)`;
  return null;
}

const originList = z
  .string()
  .default('')
  .superRefine((value, ctx) => {
    for (const entry of splitList(value)) {
      const problem = corsOriginProblem(entry);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }
  });

function splitList(value: string): string[] {
  return value.split(',').map((v) => v.trim()).filter(Boolean);
}

const boolFromEnv = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no'])
    .optional()
    .transform((v) => (v === undefined ? fallback : ['true', '1', 'yes'].includes(v)));

export const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  DATA_DIR: z.string().default('./data'),

  API_HOST: z.string().default('127.0.0.1'),
  API_PORT: intFromEnv(8402, 1),
  /** Connections the kernel holds for the API before it accepts them (capped by net.core.somaxconn); a full queue drops them into seconds of SYN retries. */
  API_LISTEN_BACKLOG: intFromEnv(4096, 1),
  /**
   * Inherited descriptors of one listening socket (comma-separated, e.g. 3,4,5), each served by its
   * own server: libuv accepts one connection per handle per event-loop turn, so N handles accept N.
   * Set by the stack's launcher (API_ACCEPT_HANDLES of them); unset, the API binds API_HOST:API_PORT itself.
   */
  API_LISTEN_FDS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return undefined;
      const fds = v.split(',').map((x) => Number(x.trim()));
      if (fds.some((fd) => !Number.isInteger(fd) || fd < 3)) ctx.addIssue({ code: 'custom', message: 'comma-separated descriptors, each 3 or above' });
      return fds;
    }),
  /** How many accepting handles the stack's launcher gives the API on its listening socket (API_LISTEN_FDS). */
  API_ACCEPT_HANDLES: intFromEnv(64, 1),
  /**
   * Public origin of the API; {base_url} is this + /api/v1 and {mcp_url} is this + /mcp. The OAuth
   * and MCP routes refuse a request whose Host (X-Forwarded-Host when set) is not this origin's host.
   */
  PUBLIC_ORIGIN: optionalString,

  TEMPORAL_ADDRESS: z.string().default('127.0.0.1:7233'),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('credit-facilitator'),
  /**
   * The settlement shards' own task queue, served by a second worker of every worker process (its
   * own workflow thread and slots): a shard's workflow tasks do not wait behind the payments' bursts.
   */
  SETTLEMENT_TASK_QUEUE: z.string().default('credit-facilitator-settlement'),
  TEMPORAL_UI_PORT: intFromEnv(8233, 1),
  TEMPORAL_CLI_PATH: optionalString,
  /** A promtool to run the alert rules' checks with (npm test); unset: promtool on PATH, else built once into the tools cache. */
  PROMTOOL_PATH: optionalString,
  /** The embedded stack's Temporal: `dev` (start-dev, one process) or `cluster` (PostgreSQL, four services; tools/stack/cluster). */
  TEMPORAL_TOPOLOGY: z.enum(['dev', 'cluster']).default('dev'),

  MONGODB_URI: optionalString,
  MONGODB_PORT: intFromEnv(27017, 1),
  MONGODB_DB: z.string().default('credit_facilitator'),
  /** The embedded FerretDB's SQLite `synchronous`: `normal` (no fsync per commit) or `full` (tools/stack/args.ts). */
  FERRETDB_SQLITE_SYNCHRONOUS: z.enum(['normal', 'full']).default('normal'),

  RPC_URL: optionalString,
  ANVIL_PORT: intFromEnv(8545, 1),
  /** The embedded anvil mines a block every this many seconds (2: Base's rhythm); 0 mines one per transaction. */
  ANVIL_BLOCK_TIME_SECONDS: intFromEnv(0, 0),
  CHAIN_ID: intFromEnv(84532, 1),
  /** Hex private key of the settler account. Defaults to anvil's first dev account, only when anvil is ours. */
  SETTLER_PRIVATE_KEY: optionalString,
  /** Public address of the settler; the API shows it in /supported and never holds the key. */
  SETTLER_ADDRESS: optionalString,
  SETTLEMENT_CONTRACT_ADDRESS: optionalString,
  ASSET_ADDRESS: optionalString,
  /** First block to scan for settlement events (the deployment block). */
  DEPLOY_BLOCK: z.string().regex(/^\d+$/).default('0'),
  CONFIRMATIONS: intFromEnv(1, 0),
  /** A settler transaction still unmined this long is re-sent with the same nonce and fees raised 25 %. */
  TX_REPLACE_AFTER_MS: intFromEnv(60_000, 100),
  /** The highest maxFeePerGas (gwei) a replacement may offer; 0 means no cap. */
  TX_MAX_FEE_GWEI: intFromEnv(0, 0),

  BATCH_MAX_PAYMENTS: intFromEnv(100, 1),
  BATCH_MAX_WAIT_MS: intFromEnv(5000, 10),
  /**
   * Ready payments that make a batch due at once. 1 (group commit): a shard sends as soon as it is
   * free, and batches fill by themselves with what arrives while the previous one settles. Raise it
   * to trade latency for gas; BATCH_MAX_WAIT_MS caps how long a payment waits for it.
   */
  BATCH_MIN_PAYMENTS: intFromEnv(1, 1),
  BATCH_MAX_ATTEMPTS: intFromEnv(3, 1),
  /** Under a backlog a batch may take up to this many payments (gas per payment falls as batches grow). */
  BATCH_MAX_PAYMENTS_UNDER_BACKLOG: intFromEnv(400, 1),
  /** Settlement shards: each has its own queue and workflow (settlement-shard-<n>); API and worker must agree. */
  SETTLEMENT_SHARDS: intFromEnv(2, 1),
  /** How often a shard looks at its queue while a batch gathers. */
  SETTLEMENT_POLL_MS: intFromEnv(200, 10),
  /** A batch end's payment-workflow signals go out evenly over this long, so their workflow tasks do not take both cores at once (0: all at once). */
  SETTLEMENT_NOTIFY_SPREAD_MS: intFromEnv(1500, 0),
  /** Captures are shed (503 + Retry-After) while more accepted payments than this wait for settlement. */
  SETTLEMENT_MAX_BACKLOG: intFromEnv(3000, 1),
  /** Captures one API process works on at once; more wait for a slot up to CAPTURE_MAX_QUEUE_MS, then are shed. */
  CAPTURE_MAX_IN_FLIGHT: intFromEnv(64, 1),
  /** The share of the in-flight limit one merchant's captures may hold (in flight and waiting, at least 1 slot); past it that merchant's captures are shed (503). 1: no per-merchant cap. */
  CAPTURE_MERCHANT_SHARE: z.coerce.number().gt(0).max(1).default(0.25),
  /** How long a capture may wait for an in-flight slot before it is shed (503); 0 sheds at once. */
  CAPTURE_MAX_QUEUE_MS: intFromEnv(250, 0),
  /** The wait for a slot while the process is shedding (a capture found no slot in time within the last second); at most CAPTURE_MAX_QUEUE_MS. */
  CAPTURE_OVERLOAD_QUEUE_MS: intFromEnv(25, 0),
  /** The in-flight limit never shrinks below this many milliseconds of the most captures measured finishing in a second of the last 30; unset: CAPTURE_TARGET_LATENCY_MS. */
  CAPTURE_THROUGHPUT_ALLOWANCE_MS: z.coerce.number().int().min(1).optional(),
  /** How long an API process trusts a merchant document and a live API key it read; a revocation or a disabled merchant takes effect within it. 0: read on every request. */
  MERCHANT_AUTH_CACHE_MS: intFromEnv(5000, 0),
  /** The in-flight limit shrinks while captures take longer than this (p90 over a second) and fill it or queue for it, and grows back below it. */
  CAPTURE_TARGET_LATENCY_MS: intFromEnv(150, 1),
  /** The worker's sweeper finishes a capture still CAPTURING after this long (the API normally does it at once). */
  CAPTURE_SWEEP_AFTER_SECONDS: intFromEnv(30, 1),
  CAPTURE_SWEEP_INTERVAL_SECONDS: intFromEnv(10, 1),

  /**
   * Status long polls (`Prefer: wait=N`) one API process holds at once; one more is answered at
   * once, as a plain poll. Each held poll is an open connection (a file descriptor) and a timer.
   */
  PAYMENT_WAIT_MAX_WAITERS: intFromEnv(1000, 0),

  RATE_LIMIT_VERIFY_PER_MIN: intFromEnv(120, 1),
  RATE_LIMIT_VERIFY_BURST: intFromEnv(20, 1),
  RATE_LIMIT_CAPTURE_PER_MIN: intFromEnv(30, 1),
  RATE_LIMIT_CAPTURE_BURST: intFromEnv(10, 1),

  IDEMPOTENCY_RETENTION_HOURS: intFromEnv(24, 1),
  VOUCHER_MAX_LIFETIME_SECONDS: intFromEnv(3600, 1),
  CLOCK_SKEW_SECONDS: intFromEnv(60, 0),

  MERCHANT_JWT_ISSUER: optionalString,
  MERCHANT_JWT_AUDIENCE: z.string().default('credit-facilitator'),
  MERCHANT_JWT_JWKS_URL: optionalString,
  /** A public JWK (JSON) for merchant user JWTs; the dev stack writes one under DATA_DIR when unset. */
  MERCHANT_JWT_PUBLIC_JWK: optionalString,

  /** RFC 7591 dynamic client registration (loopback redirect URIs and OAUTH_DCR_ALLOWED_HOSTS only). */
  OAUTH_DCR_ENABLED: boolFromEnv(true),
  /** Comma-separated host names of named agent hosts whose https redirect URIs DCR accepts. */
  OAUTH_DCR_ALLOWED_HOSTS: z.string().default(''),
  /** Registrations one source address may make: a token bucket of this rate per minute and burst. */
  OAUTH_DCR_PER_MIN: intFromEnv(10, 1),
  OAUTH_DCR_BURST: intFromEnv(20, 1),
  /**
   * A registered client is deleted this many hours after registration unless a borrower grants it
   * something; a grant keeps it until the grant expires (REFRESH_TOKEN_TTL_SECONDS), never forever.
   */
  OAUTH_UNUSED_CLIENT_TTL_HOURS: intFromEnv(24, 1),
  /**
   * Wallet sign-ins (the OAuth sign-in page and the borrower page): a token bucket of this rate per
   * minute and burst for each source address, and another for each wallet.
   */
  WALLET_SIGNIN_PER_MIN: intFromEnv(10, 1),
  WALLET_SIGNIN_BURST: intFromEnv(20, 1),
  /** Client ID Metadata Documents: an https URL as client_id, its document fetched under the limits of src/auth/oauth/cimd.ts. */
  OAUTH_CIMD_ENABLED: boolFromEnv(true),
  /**
   * TEST ONLY: path of a PEM CA that CIMD fetches trust beside the system roots; it also lets CIMD
   * hosts resolve to loopback. Refused when NODE_ENV=production.
   */
  OAUTH_CIMD_TEST_CA_FILE: optionalString,
  BORROWER_TOKEN_TTL_SECONDS: intFromEnv(900, 60),
  REFRESH_TOKEN_TTL_SECONDS: intFromEnv(30 * 24 * 3600, 300),
  /** Credit line offered to a borrower on accept_credit_facility, in asset base units (1000 USDC). */
  DEFAULT_CREDIT_LIMIT: z.string().regex(/^[1-9][0-9]{0,15}$/).default('1000000000'),
  /** How long a prepared spend intent holds its credit before it expires unused. */
  SPEND_INTENT_TTL_SECONDS: intFromEnv(600, 10),
  /** How long a signing link stays open for the borrower's wallet. */
  SIGNING_REQUEST_TTL_SECONDS: intFromEnv(900, 30),

  /**
   * Comma-separated exact origins (https://inspector.example.com) whose browser pages may call /mcp,
   * the well-known metadata and the OAuth token, registration and revocation endpoints (CORS).
   * None by default; with NODE_ENV=development every loopback origin is allowed as well.
   */
  MCP_CORS_ORIGINS: originList,

  /** When set, GET /metrics needs Authorization: Bearer <METRICS_TOKEN>. */
  METRICS_TOKEN: optionalString,
  /** The worker's own Prometheus endpoint on 127.0.0.1 (0 turns it off). */
  WORKER_METRICS_PORT: intFromEnv(9464, 0),
  /** How often the worker reads the gauges that need the store or the chain (oldest queued payment, balances, nonce gap). */
  WORKER_METRICS_SAMPLE_MS: intFromEnv(10_000, 1_000),
  /**
   * The worker's CPU niceness (0-19; 0 leaves it alone). Settlement is background work: on a box it
   * shares with the API, the store and Temporal it yields to the captures merchants wait on.
   */
  WORKER_CPU_NICE: z.coerce.number().int().min(0).max(19).default(10),
  /** Payments waiting across a worker's shards at which it takes its CPU priority back (0: never). */
  WORKER_CPU_NICE_BACKLOG: z.coerce.number().int().min(0).default(500),

  /**
   * OpenTelemetry traces go to this OTLP/HTTP endpoint (e.g. http://127.0.0.1:4318; spans are sent
   * to <endpoint>/v1/traces). Unset, nothing is traced: the API and worker keep OpenTelemetry's no-op tracer.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.refine((v) => v === undefined || URL.canParse(v), 'an http(s) URL'),
  /** OTLP encoding: `http/protobuf` (the OTLP default) or `http/json`. */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).default('http/protobuf'),
  /** service.name of the spans; unset, each process names itself (credit-facilitator-api, credit-facilitator-worker). */
  OTEL_SERVICE_NAME: optionalString,

  DEV_TOOLS: boolFromEnv(true),
  /** Adds a Server-Timing header with the capture's phases (auth, rate limit, store, workflow); for profiling. */
  SERVER_TIMING: boolFromEnv(false),

  /** Webhook deliveries to loopback and private addresses: dev stacks and tests only (SSRF guard otherwise). */
  WEBHOOK_ALLOW_PRIVATE: boolFromEnv(false),
  /** base64url 32 bytes sealing stored secrets (webhook signing secrets); the embedded stack uses DATA_DIR/secrets.key. */
  SECRETS_ENCRYPTION_KEY: optionalString,
  /** First retry of a failed delivery; the wait doubles up to WEBHOOK_RETRY_MAX_MS, for 3 days in all. */
  WEBHOOK_RETRY_INITIAL_MS: intFromEnv(5_000, 100),
  WEBHOOK_RETRY_MAX_MS: intFromEnv(3_600_000, 1_000),
});

export type Env = z.infer<typeof EnvSchema>;

export class ConfigError extends Error {}

export function loadEnv(source: NodeJS.ProcessEnv = process.env): Env {
  const parsed = EnvSchema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  if (parsed.data.NODE_ENV === 'production' && parsed.data.OAUTH_CIMD_TEST_CA_FILE !== undefined) {
    throw new ConfigError('invalid configuration:\n  OAUTH_CIMD_TEST_CA_FILE: a test-only setting (trusts a test CA and loopback CIMD hosts); unset it in production');
  }
  return parsed.data;
}

/** PUBLIC_ORIGIN, else http://API_HOST:API_PORT. */
export function publicOrigin(env: Env): string {
  return env.PUBLIC_ORIGIN ?? `http://${env.API_HOST}:${env.API_PORT}`;
}

export function baseUrl(env: Env): string {
  return `${publicOrigin(env)}/api/v1`;
}

export function mcpUrl(env: Env): string {
  return `${publicOrigin(env)}/mcp`;
}

/** The OAuth 2.1 authorization server's issuer (RFC 8414 metadata lives under it). */
export function oauthIssuer(env: Env): string {
  return `${publicOrigin(env)}/oauth`;
}

/** The Host (host[:port], lower case, default port omitted) that OAuth and MCP requests must carry. */
export function publicHost(env: Env): string {
  return new URL(publicOrigin(env)).host.toLowerCase();
}

/** Host names DCR accepts for non-loopback redirect URIs. */
export function dcrAllowedHosts(env: Env): string[] {
  return splitList(env.OAUTH_DCR_ALLOWED_HOSTS).map((h) => h.toLowerCase());
}

/** The origins MCP_CORS_ORIGINS names (each already checked by corsOriginProblem). */
export function corsAllowedOrigins(env: Env): string[] {
  return splitList(env.MCP_CORS_ORIGINS);
}

export function networkId(env: Env): string {
  return `eip155:${env.CHAIN_ID}`;
}
