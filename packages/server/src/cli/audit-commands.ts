/** `audit list` and `audit verify`: reading the audit trail, and checking that it is whole. */
import {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditEvent,
  type AuditFilter,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
} from '../audit/index.js';
import { type Command, defineCommand, stringOption, timeOption, wholeNumberOption } from './args.js';
import { isoTime, jsonTime, table, toJson } from './output.js';

function detailsText(event: AuditEvent): string {
  return Object.keys(event.details).length === 0 ? '' : toJson(event.details);
}

const auditList = defineCommand<AuditFilter>({
  name: 'audit list',
  summary: 'Show who did what to merchants, keys, secrets, gateways, the vault, shoppers and webhooks.',
  options: {
    since: { type: 'string', value: 'TIME', description: 'events at or after this RFC 3339 time' },
    after: {
      type: 'string',
      value: 'SEQ',
      description: 'events numbered after this one: to go on copying the trail elsewhere',
    },
    merchant: { type: 'string', value: 'ID', description: "only events of this merchant's account" },
    action: {
      type: 'string',
      value: 'NAME',
      choices: AUDIT_ACTIONS,
      description: 'only this action, e.g. api_key.revoked',
    },
    subject: {
      type: 'string',
      value: 'ID',
      description: "only events about this shopper (their wallet's changes and devices), key or message",
    },
    limit: {
      type: 'string',
      value: 'N',
      description: `at most N events (default ${DEFAULT_LIST_LIMIT}, at most ${MAX_LIST_LIMIT}): the latest, or the first from --since or --after`,
    },
  },
  details: [
    `Actions: ${AUDIT_ACTIONS.join(', ')}.`,
    'Actors: operator:<name>@<host> (a command; WALLET_OPERATOR names the person), merchant:<id>/<key id> (the API),',
    'shopper:<id> (the checkout), service. Events are shown oldest first. This listing is itself recorded.',
    'With --json: {"events": [{"seq", "at", "actor", "action", "merchantId", "subject", "details",',
    '"prevHash", "hash"}]}, `at` in ISO 8601 (the hashes cover it in ms since the epoch).',
  ],
  prepare({ values }) {
    const command = 'audit list';
    const action = stringOption(values, 'action');
    const filter: AuditFilter = {};
    const since = timeOption(values, 'since', command);
    const afterSeq = wholeNumberOption(values, 'after', { min: 0, max: Number.MAX_SAFE_INTEGER }, command);
    const merchantId = stringOption(values, 'merchant');
    const subject = stringOption(values, 'subject');
    const limit = wholeNumberOption(values, 'limit', { min: 1, max: MAX_LIST_LIMIT }, command);
    if (since !== undefined) filter.since = since;
    if (afterSeq !== undefined) filter.afterSeq = afterSeq;
    if (merchantId !== undefined) filter.merchantId = merchantId;
    if (action !== undefined) filter.action = action as AuditAction;
    if (subject !== undefined) filter.subject = subject;
    if (limit !== undefined) filter.limit = limit;
    return filter;
  },
  async execute(context, filter) {
    const events = await context.audit.list(filter);
    const shown = Object.fromEntries(
      Object.entries(filter).map(([name, value]) => [name, name === 'since' ? isoTime(value) : value]),
    );
    await context.audit.record({ actor: context.actor, action: 'audit.viewed', details: shown });
    const text =
      events.length === 0
        ? 'No audit events match.'
        : table(
            ['seq', 'time', 'actor', 'action', 'merchant', 'subject', 'details'],
            events.map((event) => [
              String(event.seq),
              isoTime(event.at),
              event.actor,
              event.action,
              event.merchantId ?? '-',
              event.subject ?? '-',
              detailsText(event),
            ]),
          );
    context.print(text, { events: events.map((event) => ({ ...event, at: jsonTime(event.at) })) });
    return 0;
  },
});

const auditVerify = defineCommand<undefined>({
  name: 'audit verify',
  summary: 'Check that the audit trail is whole: no event altered, removed or slipped in.',
  details: [
    'Walks the hash chain from the first event and compares its end with the head the writers keep.',
    'Events cut from the end show against a copy of the last hash kept elsewhere (`audit list --json`).',
    'Exit code 1 when it is broken. With --json: {"ok", "events", "head": {"seq", "hash"}} or',
    '{"ok": false, "events", "seq", "problem"}.',
  ],
  prepare: () => undefined,
  async execute(context) {
    const result = await context.audit.verify();
    if (result.ok) {
      context.print(
        `The audit trail is whole: ${result.events} event(s); the last, ${result.head.seq}, has the hash ${result.head.hash}.`,
        result,
      );
      return 0;
    }
    context.print(
      `The audit trail is broken at event ${result.seq}: ${result.problem} (${result.events} event(s) before it check out).`,
      result,
    );
    return 1;
  },
});

export const AUDIT_COMMANDS: Command[] = [auditList, auditVerify];
