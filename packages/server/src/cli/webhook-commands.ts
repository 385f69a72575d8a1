/** `webhooks status`: how far webhook delivery is behind, for an operator. */
import { DbClock } from '../db/clock.js';
import { type Backlog, Webhooks } from '../webhooks/index.js';
import { type Command, defineCommand } from './args.js';
import type { Context } from './context.js';
import { isoTime, table } from './output.js';

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
    'With --json: {"pending", "due", "held", "oldestDueAt", "failed", "mostBehind"}, times in ms.',
  ],
  prepare: () => undefined,
  async execute(context: Context) {
    // The database's time, as the leases and due times are written in (see db/clock.ts).
    const clock = new DbClock(context.db);
    await clock.start(() => undefined);
    clock.stop();
    // Reads only: nothing is resent, so there is no dispatcher to wake.
    const webhooks = new Webhooks({ db: context.db, dispatcher: { wake: () => undefined }, now: clock.now });
    const backlog = await webhooks.backlog();
    context.print(describeBacklog(backlog, clock.now()), backlog);
    return 0;
  },
});

export const WEBHOOK_COMMANDS: Command[] = [webhooksStatus];
