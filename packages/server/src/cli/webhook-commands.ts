/**
 * `webhooks status` and `webhooks recover`: how far webhook delivery is behind, and sending again what
 * an outage let fail, for an operator.
 */
import { DbClock } from '../db/clock.js';
import { NotFoundError } from '../errors.js';
import { createLogger } from '../log.js';
import { type Backlog, WakeUps, Webhooks } from '../webhooks/index.js';
import { type Command, defineCommand, requiredOption, stringOption, timeOption } from './args.js';
import type { Context } from './context.js';
import { isoTime, jsonTime, table } from './output.js';

/** The service's webhooks read and changed in the database's time, as leases and due times are written. */
async function webhooksOf(context: Context): Promise<{ webhooks: Webhooks; now: () => number }> {
  const clock = new DbClock(context.db);
  await clock.start(() => undefined);
  clock.stop();
  // No dispatcher runs here: `recover` wakes the service's processes itself once it is done.
  const webhooks = new Webhooks({ db: context.db, dispatcher: { wake: () => undefined }, now: clock.now });
  return { webhooks, now: clock.now };
}

function waited(since: number, now: number): string {
  const seconds = Math.max(Math.round((now - since) / 1000), 0);
  return seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
}

function describeBacklog(backlog: Backlog, now: number): string {
  const lines = [
    `Pending webhook messages: ${backlog.pending}`,
    `  due now: ${backlog.due} (${backlog.held} of them held by a delivering process)`,
    `  waiting for a later retry: ${backlog.pending - backlog.due}`,
    backlog.oldestDueAt === null
      ? 'Nothing is due.'
      : `Longest-waiting due message: due since ${isoTime(backlog.oldestDueAt)} (${waited(backlog.oldestDueAt, now)})`,
    `Given up (FAILED) in the last 24 hours: ${backlog.failed}`,
  ];
  if (backlog.mostBehind.length > 0) {
    lines.push(
      'Merchants with the most due:',
      table(
        ['merchant', 'due', 'due since'],
        backlog.mostBehind.map((row) => [row.merchantId, String(row.due), isoTime(row.oldestDueAt)]),
      ),
    );
  }
  return lines.join('\n');
}

const webhooksStatus = defineCommand<undefined>({
  name: 'webhooks status',
  summary: 'Show how far webhook delivery is behind: messages due, the oldest, who waits most.',
  details: [
    'Held messages are due ones a running process has taken: queued in it, or being delivered.',
    'With --json: {"pending", "due", "held", "oldestDueAt", "failed", "mostBehind"}, times in ISO 8601.',
  ],
  prepare: () => undefined,
  async execute(context: Context) {
    const { webhooks, now } = await webhooksOf(context);
    const backlog = await webhooks.backlog();
    context.print(describeBacklog(backlog, now()), {
      ...backlog,
      oldestDueAt: jsonTime(backlog.oldestDueAt),
      mostBehind: backlog.mostBehind.map((row) => ({ ...row, oldestDueAt: jsonTime(row.oldestDueAt) })),
    });
    return 0;
  },
});

interface RecoverInput {
  since: number;
  merchantId: string | undefined;
}

const webhooksRecover = defineCommand<RecoverInput>({
  name: 'webhooks recover',
  summary: "Send again the webhook messages given up (FAILED) since a time: one merchant's, or all.",
  options: {
    since: {
      type: 'string',
      value: 'TIME',
      description: 'an RFC 3339 time with its zone, e.g. 2026-11-25T08:00:00Z',
    },
    merchant: {
      type: 'string',
      value: 'ID',
      description: "only this merchant's messages (default: every merchant's)",
    },
  },
  details: [
    'For an outage longer than the retry schedule, of a receiver or of the service itself. Each message keeps',
    'its webhook-id and starts a fresh schedule; running processes deliver them (on SQLite within a poll, 5 s).',
    'A PAYMENT_CREDENTIALS message whose card the shopper has since removed is never sent again; the',
    'answer counts those too. With --json: {"recovered": <count>, "notSent": <count>}.',
  ],
  prepare({ values }) {
    requiredOption(values, 'since', 'webhooks recover');
    const since = timeOption(values, 'since', 'webhooks recover') as number;
    return { since, merchantId: stringOption(values, 'merchant') };
  },
  async execute(context, { since, merchantId }) {
    if (merchantId !== undefined && !(await context.merchants.get(merchantId))) {
      throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${merchantId} does not exist`);
    }
    const { webhooks } = await webhooksOf(context);
    let recovered = 0;
    let notSent = 0;
    for (;;) {
      const batch = await webhooks.recover(merchantId, since, context.actor);
      recovered += batch.recovered;
      ({ notSent } = batch);
      // None taken although some are left: another recovery holds them (PostgreSQL); they are its.
      if (!batch.hasMore || batch.recovered === 0) break;
    }
    if (recovered > 0)
      await new WakeUps({ db: context.db, log: createLogger('silent'), onWake: () => undefined }).notify();
    const whose = merchantId === undefined ? 'every merchant' : `merchant ${merchantId}`;
    const passedBy =
      notSent > 0
        ? ` Not sent again: ${notSent} carrying a card the shopper has removed, whose card data is not sent any more.`
        : '';
    context.print(
      `Sent again ${recovered} webhook message(s) of ${whose} given up since ${isoTime(since)}.${passedBy}`,
      { recovered, notSent },
    );
    return 0;
  },
});

export const WEBHOOK_COMMANDS: Command[] = [webhooksStatus, webhooksRecover];
