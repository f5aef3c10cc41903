import { createHash } from 'node:crypto';

/**
 * A delivery is one event sent by one delivery workflow, so its id follows from both: every
 * attempt of the activity finds the same delivery, and the API knows the id of a delivery it
 * starts before the first attempt is made.
 */
export function webhookDeliveryId(workflowId: string, eventId: string): string {
  return `whd_${createHash('sha256').update(`${workflowId}\n${eventId}`).digest('hex').slice(0, 32)}`;
}

export const WEBHOOK_DELIVERY_ID = /^whd_[0-9a-f]{32}$/;
