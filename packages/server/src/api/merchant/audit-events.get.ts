import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { AUDIT_ACTIONS, type AuditEvent, type AuditTrail } from '../../audit/index.js';
import { merchantOf } from '../plugins/auth.js';
import { BEARER_SECURITY, errorResponses, ListQuery, Page, Timestamp } from '../schemas.js';

const Actor = Type.Union(
  [Type.Literal('operator'), Type.Literal('merchant'), Type.Literal('shopper'), Type.Literal('service')],
  {
    description:
      "`operator`: someone running the service, at its command line (the service's own trail names them); `merchant`: your server, with one of your API keys; `shopper`: a shopper in the checkout (their own wallet's actions, which name no merchant, so not shown here today); `service`: the service on its own.",
  },
);

const AuditEventResource = Type.Object({
  seq: Type.Integer({
    description: "The event's number in the service's trail; pass it as `startingAfter` for older events.",
  }),
  at: Timestamp,
  actor: Actor,
  apiKeyId: Type.Union([Type.String(), Type.Null()], {
    description:
      'For `merchant`: which of your API keys (`key_…`, as `apikey list` shows them) took the action.',
  }),
  action: Type.Union(
    AUDIT_ACTIONS.map((action) => Type.Literal(action)),
    { description: 'What was done; see the operations guide for each action and its details.' },
  ),
  subject: Type.Union([Type.String(), Type.Null()], {
    description: 'The API key (`key_…`) or webhook message (`msg_…`) acted on, when not your account itself.',
  }),
  details: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'The settings as they became, the key prefix, the counts: never a key, a secret or card data.',
  }),
});
type AuditEventResource = Static<typeof AuditEventResource>;

function toResource(event: AuditEvent): AuditEventResource {
  const [kind = '', who = ''] = event.actor.split(':');
  const apiKeyId = kind === 'merchant' ? (who.split('/')[1] ?? null) : null;
  return {
    seq: event.seq,
    at: new Date(event.at).toISOString(),
    actor: kind as AuditEventResource['actor'],
    apiKeyId,
    action: event.action as AuditEventResource['action'],
    subject: event.subject,
    details: event.details,
  };
}

/** The merchant's security history: what was done to its account, keys and webhooks, and by whom. */
export const auditEventsRoute =
  (deps: { audit: AuditTrail }): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.get(
      '/audit-events',
      {
        config: { auth: 'merchant' },
        schema: {
          tags: ['Account'],
          operationId: 'listAuditEvents',
          summary: "Your account's security history",
          description:
            "What was done to your merchant account, its API keys, webhook secret and gateway account, and the webhooks you had sent again, newest first, from the service's audit trail: who (the service's operators, your server, or the service), when, and what changed. For the next page, pass the last event's `seq` as `startingAfter` while `hasMore` is true. Kept for good.",
          security: BEARER_SECURITY,
          querystring: ListQuery({
            startingAfter: Type.Optional(
              Type.Integer({
                minimum: 1,
                description:
                  "An event's `seq`, usually the last of the previous page: lists the events before it (older).",
              }),
            ),
          }),
          response: {
            200: Page(AuditEventResource, 'events'),
            ...errorResponses(['UNAUTHORIZED', 'VALIDATION_ERROR']),
          },
        },
      },
      async (request) => {
        const { limit = 20, startingAfter } = request.query;
        const page = await deps.audit.merchantPage(merchantOf(request).id, { limit, before: startingAfter });
        return { data: page.events.map(toResource), hasMore: page.hasMore };
      },
    );
  };
