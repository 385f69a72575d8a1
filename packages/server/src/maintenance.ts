/**
 * The service's periodic clean-up: expired idempotency keys, orders left open past their life, sign-in
 * codes and tokens, enrolments and rate-limit windows every 10 minutes, and the retention sweep (which
 * also erases the card numbers no wallet holds) at start and with them. Every process runs it; each
 * sweep is safe to run in several processes at once.
 */
import type { Logger } from './log.js';
import type { Services } from './server.js';

/** 10 min between sweeps of expired idempotency keys and orders left open past their life. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

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
  // At start too: a process restarted more often than the sweeps run would never sweep otherwise.
  retain();
  const timer = setInterval(() => {
    retain();
    for (const [name, sweep] of sweeps) {
      sweep().catch((error: unknown) => log.warn({ err: error }, `${name} sweep failed`));
    }
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await services.retention.stop();
    },
  };
}
