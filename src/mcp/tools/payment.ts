import { preparePayment } from './services.js';
import { defineTool } from './define.js';
import { PrepareX402PaymentInput } from './inputs.js';
import { PreparePaymentOutput } from '@credit-facilitator/wire/tool-outputs';

export const prepareX402PaymentTool = defineTool({
  name: 'prepare_x402_payment',
  title: 'Prepare an x402 credit payment',
  description:
    "Given a merchant's 402 answer (the PAYMENT-REQUIRED header value or its decoded object), checks policy (merchant, scheme, network, asset, " +
    'key limits, available credit), reserves the credit and returns the voucher to sign. Sign signing_input (exact UTF-8 string) with your ' +
    'Ed25519 agent key, base64url the signature, put {voucher, signature} in the x402 payload and retry the merchant request with ' +
    'PAYMENT-SIGNATURE and Idempotency-Key = idempotency_key. The same order_ref returns the same intent while it is open (reused: true).',
  inputSchema: PrepareX402PaymentInput,
  outputSchema: PreparePaymentOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: preparePayment,
  summarize: (o) =>
    `Spend intent ${String(o.spend_intent_id)}${o.reused === true ? ' (reused)' : ''}: sign signing_input with the agent key and send PAYMENT-SIGNATURE with Idempotency-Key ${String(o.idempotency_key)}.`,
});
