import { randomBytes } from 'node:crypto';

/** A Standard Webhooks secret: `whsec_` and 32 random bytes, base64. Shown to the merchant once. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
