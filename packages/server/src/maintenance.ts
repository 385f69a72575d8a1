/**
 * The service's periodic work: expired idempotency keys, orders left open past their life, sign-in codes
 * and tokens, enrolments and rate-limit windows every 10 minutes; the retention sweep (which also
 * erases the card numbers no wallet holds) and the payments a stopped process left under way, at start
 * and with them; and every 10 seconds, the audit
 * trail's new events copied into the log. Every process runs it; each part is safe to run in several
 * processes at once.
 */
import type { Logger } from './log.js';
import type { Services } from './server.js';

/** 10 min between sweeps of expired idempotency keys and orders left open past their life. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
/** 10 s: a log server has an audit event within seconds of the action, a command's included. */
const AUDIT_COPY_INTERVAL_MS = 10_000;

/** Starts the sweeps; `stop()` ends them, and waits for a retention sweep under way to end its batch. */
export function startMaintenance(services: Services, log: Logger): { stop(): Promise<void> } {
  const sweeps: [string, () => Promise<unknown>][] = [
    ['idempotency', () => services.idempotency.sweep()],
    ['order expiry', () => services.orders.expireDue()],
    ['shopper sign-in', () => services.shopperAuth.sweep()],
    ['enrolment', () => services.checkout.sweep()],
    ['rate-limit', () => services.rateLimits.sweep()],
  ];
  const retain = () => {
    services.retention
      .sweep()
      .then(({ erasedCards, ...deleted }) => {
        if (deleted.messages > 0 || deleted.orders > 0) {
          log.info(
            { ...deleted, days: services.config.retentionDays },
            'deleted webhook messages, credentials requests and abandoned orders past their retention',
          );
        }
        if (erasedCards > 0) {
          log.info({ erasedCards }, 'erased the card numbers of cards removed from every wallet');
        }
      })
      .catch((error: unknown) => log.warn({ err: error }, 'retention sweep failed; it runs again later'));
  };
  const settlePayments = () => {
    services.checkout
      .settleStalledPayments()
      .then((settled) => {
        if (settled > 0) log.info({ settled }, 'finished the payments a stopped process left under way');
      })
      .catch((error: unknown) =>
        log.warn({ err: error }, 'stalled payments sweep failed; it runs again later'),
      );
  };
  let copying: Promise<unknown> | undefined;
  const copyAudit = () => {
    // Below `info` the lines would go nowhere: the events wait for a process that logs them.
    if (copying || !log.isLevelEnabled('info')) return;
    copying = services.audit
      .copyNew((event) =>
        log.info({ audit: { ...event, at: new Date(event.at).toISOString() } }, 'audit event'),
      )
      .catch((error: unknown) =>
        log.warn({ err: error }, 'copying the audit trail into the log failed; it is tried again'),
      )
      .finally(() => {
        copying = undefined;
      });
  };
  // At start too: a process restarted more often than the sweeps run would never sweep otherwise.
  retain();
  settlePayments();
  copyAudit();
  const auditTimer = setInterval(copyAudit, AUDIT_COPY_INTERVAL_MS);
  auditTimer.unref();
  const timer = setInterval(() => {
    retain();
    settlePayments();
    for (const [name, sweep] of sweeps) {
      sweep().catch((error: unknown) => log.warn({ err: error }, `${name} sweep failed`));
    }
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      clearInterval(auditTimer);
      await copying;
      await services.retention.stop();
    },
  };
}
