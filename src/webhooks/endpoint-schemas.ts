import { z } from 'zod';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-events.js';

/** What a merchant sends to make or change a webhook endpoint: the REST routes and the merchant console judge it alike. */
export const WebhookEventsSchema = z
  .array(z.enum(WEBHOOK_EVENT_TYPES))
  .min(1)
  .max(WEBHOOK_EVENT_TYPES.length)
  .refine((a) => new Set(a).size === a.length, 'lists an event twice')
  .describe('The payment events the endpoint receives (default: all of them); webhook.test is sent on request whatever this says');

export const WebhookEndpointBodySchema = z.strictObject({
  url: z.string().min(1).max(2048).describe('https URL that receives signed events (Standard Webhooks)'),
  events: WebhookEventsSchema.optional(),
});

export const WebhookEndpointUpdateSchema = z.strictObject({ events: WebhookEventsSchema });

