import {
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENT_KINDS,
  webhookDeliveryStatusFromProto,
  webhookDeliveryStatusToProto,
  webhookPb,
} from '@hangar/contracts';
import { z } from 'zod';
import { pageNumber, problemResponse } from '../api.schemas.js';
import { defineRoute } from '../http/route.js';

const TAG = 'Webhooks';

const WebhookRequestSchema = z
  .strictObject({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe('https: (http: only with Webhooks:AllowInsecureHttp); private targets need AllowPrivateNetworkTargets'),
    events: z.array(z.enum(WEBHOOK_EVENT_KINDS)).min(1).max(WEBHOOK_EVENT_KINDS.length),
    secretKey: z
      .string()
      .min(1)
      .max(256)
      .describe('The NAME of the configuration key holding the whsec_ signing secret, under Webhooks:AllowedConfigurationPrefix'),
    headers: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'Extra request headers (at most Webhooks:MaxExtraHeaders); webhook-*, content-type, content-length, host and user-agent are dropped',
      ),
    enabled: z.boolean().optional().describe('Default true; enabling clears the failure count'),
    description: z.string().max(1000).optional(),
  })
  .meta({ id: 'WebhookRequest' });

const WebhookSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    secretKey: z.string().describe('The key NAME, never the secret'),
    headers: z.record(z.string(), z.string()),
    enabled: z.boolean(),
    description: z.string().nullable(),
    consecutiveFailures: z.number().int(),
    disabledAt: z.iso.datetime().nullable().describe('When failures disabled it (Webhooks:DisableAfterConsecutiveFailures)'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });

const DeliverySchema = z
  .object({
    id: z.uuid(),
    eventId: z.string().describe('The webhook-id header: the same on every attempt'),
    eventType: z.string(),
    attempt: z.number().int().describe('Attempts made so far'),
    status: z.enum(WEBHOOK_DELIVERY_STATUSES),
    responseStatus: z.number().int().nullable(),
    error: z.string().nullable(),
    nextAttemptAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

const DeliveryDetailSchema = DeliverySchema.extend({
  payload: z.unknown().describe('The body each attempt sent: { type, timestamp, data }'),
  attempts: z.array(
    z.object({
      attempt: z.number().int(),
      startedAt: z.iso.datetime(),
      durationMs: z.number().int(),
      responseStatus: z.number().int().nullable(),
      error: z.string().nullable(),
    }),
  ),
}).meta({ id: 'WebhookDeliveryDetail' });

const NameParams = z.object({ name: z.string() });

const webhookJson = (webhook: webhookPb.Webhook) => ({
  name: webhook.name,
  url: webhook.url,
  events: webhook.events,
  secretKey: webhook.secretKey,
  headers: webhook.headers,
  enabled: webhook.enabled,
  description: webhook.description ?? null,
  consecutiveFailures: webhook.consecutiveFailures,
  disabledAt: webhook.disabledAt ?? null,
  createdAt: webhook.createdAt!,
  updatedAt: webhook.updatedAt!,
});

const deliveryJson = (delivery: webhookPb.WebhookDelivery) => ({
  id: delivery.id,
  eventId: delivery.eventId,
  eventType: delivery.eventType,
  attempt: delivery.attempt,
  status: webhookDeliveryStatusFromProto(delivery.status) ?? 'Pending',
  responseStatus: delivery.responseStatus ?? null,
  error: delivery.error ?? null,
  nextAttemptAt: delivery.nextAttemptAt ?? null,
  createdAt: delivery.createdAt!,
  deliveredAt: delivery.deliveredAt ?? null,
});

/** API.md "Webhooks": a tenant's subscriptions and the log of what was sent to each. */
export const webhookRoutes = [
  defineRoute({
    method: 'get',
    path: '/api/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhook subscriptions',
    description: 'Returns the tenant’s webhook subscriptions by name, each with its failure count and when failures disabled it.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    responses: { 200: { description: 'Subscriptions', schema: WebhookSchema.array() } },
    async handler({ caller }, { webhooks }) {
      return { status: 200, body: (await webhooks.listWebhooks({}, { caller })).webhooks.map(webhookJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/{name}',
    operationId: 'getWebhook',
    summary: 'Get a webhook subscription',
    description:
      'Returns one webhook subscription as saved; secretKey is the configuration key’s name, never the secret. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    params: NameParams,
    responses: { 200: { description: 'The subscription', schema: WebhookSchema }, 404: problemResponse('No such subscription') },
    async handler({ params, caller }, { webhooks }) {
      return { status: 200, body: webhookJson((await webhooks.getWebhook({ name: params.name }, { caller })).webhook!) };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/webhooks/{name}',
    operationId: 'putWebhook',
    summary: 'Create or replace a webhook subscription',
    description:
      'Stores a subscription to event kinds, signed per Standard Webhooks with the secret named by secretKey. A secretKey outside the allowed prefix, an http: or private target that is not allowed, or too many headers is 400. Answers 201 when it created the subscription, 200 when it replaced one.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: NameParams,
    body: WebhookRequestSchema,
    responses: {
      200: { description: 'Replaced', schema: WebhookSchema },
      201: { description: 'Created', schema: WebhookSchema },
      400: problemResponse('Invalid name, URL (scheme, private target), event kind, secret key prefix or headers'),
    },
    async handler({ params, body, caller }, { webhooks }) {
      const { webhook, created } = await webhooks.putWebhook(
        {
          name: params.name,
          url: body.url,
          events: body.events,
          secretKey: body.secretKey,
          headers: body.headers ?? {},
          enabled: body.enabled ?? true,
          description: body.description,
        },
        { caller },
      );
      return { status: created ? 201 : 200, body: webhookJson(webhook!) };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/webhooks/{name}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook subscription',
    description: 'Deletes a webhook subscription together with its delivery log. An unknown name is 404.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: NameParams,
    responses: { 204: { description: 'Deleted' }, 404: problemResponse('No such subscription') },
    async handler({ params, caller }, { webhooks }) {
      await webhooks.deleteWebhook({ name: params.name }, { caller });
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/webhooks/{name}/test',
    operationId: 'testWebhook',
    summary: 'Send a test webhook',
    description:
      'Queues a webhook.test delivery to the subscription and attempts it now; 202 names the delivery to follow. A disabled subscription is still sent to; with Webhooks:Enabled false it is 409.',
    tag: TAG,
    auth: { role: 'Admin', scope: 'PlatformAdmin' },
    params: NameParams,
    responses: {
      202: {
        description: 'Queued and attempted; follow it at GET /api/webhooks/{name}/deliveries/{deliveryId}',
        schema: z.object({ deliveryId: z.uuid() }),
      },
      404: problemResponse('No such subscription'),
      409: problemResponse('Webhooks are switched off (Webhooks:Enabled)'),
    },
    async handler({ params, caller }, { webhooks }) {
      return { status: 202, body: { deliveryId: (await webhooks.testWebhook({ name: params.name }, { caller })).deliveryId } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/{name}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'List webhook deliveries',
    description:
      'Returns the subscription’s deliveries, newest first, optionally by status. Paged with skip (default 0) and take (default 50, clamped to 1..200).',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    params: NameParams,
    query: z.object({ status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(), skip: pageNumber(0), take: pageNumber(50) }),
    responses: { 200: { description: 'Deliveries', schema: DeliverySchema.array() }, 404: problemResponse('No such subscription') },
    async handler({ params, query, caller }, { webhooks }) {
      const { deliveries } = await webhooks.listWebhookDeliveries(
        {
          name: params.name,
          status: query.status
            ? webhookDeliveryStatusToProto(query.status)
            : webhookPb.WebhookDeliveryStatus.WEBHOOK_DELIVERY_STATUS_UNSPECIFIED,
          skip: query.skip,
          take: query.take,
        },
        { caller },
      );
      return { status: 200, body: deliveries.map(deliveryJson) };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/webhooks/{name}/deliveries/{id}',
    operationId: 'getWebhookDelivery',
    summary: 'Get a webhook delivery',
    description: 'Returns one delivery with the body it sends and each attempt made. An unknown delivery is 404.',
    tag: TAG,
    auth: { role: 'Reader', scope: 'PlatformRead' },
    params: z.object({ name: z.string(), id: z.string() }),
    responses: { 200: { description: 'The delivery', schema: DeliveryDetailSchema }, 404: problemResponse('No such delivery') },
    async handler({ params, caller }, { webhooks }) {
      const found = await webhooks.getWebhookDelivery({ name: params.name, id: params.id }, { caller });
      return {
        status: 200,
        body: {
          ...deliveryJson(found.delivery!),
          payload: found.payload ?? null,
          attempts: found.attempts.map((attempt) => ({
            attempt: attempt.attempt,
            startedAt: attempt.startedAt!,
            durationMs: attempt.durationMs,
            responseStatus: attempt.responseStatus ?? null,
            error: attempt.error ?? null,
          })),
        },
      };
    },
  }),
];
