import type { Kysely } from 'kysely';
import type { Database, Engine } from '../db/index.js';
import { PAYMENT_CREDENTIALS } from '../payments/credentials.js';

/**
 * How long a card number is kept after a wallet removed the card: a payment already under way with it (a
 * gateway call, at most a few seconds) mostly ends well within; one whose gateway has not answered keeps
 * it for as long as it is under way (`holdersOf`).
 */
export const ERASE_AFTER_MS = 60 * 60_000;

/** When an entry a webhook on its way still needs is looked at again. */
export const RECHECK_AFTER_MS = 10 * 60_000;

/**
 * Schedules the erasure of a card's number, in the transaction that removes the card from its wallet:
 * due ERASE_AFTER_MS from `now`, the latest removal of a number held by several wallets counting. A
 * number already erased is left alone.
 */
export async function scheduleErasure(trx: Kysely<Database>, vaultId: string, now: number): Promise<void> {
  await trx
    .insertInto('vault_erasures')
    .columns(['vault_id', 'due_at'])
    .expression((eb) =>
      eb
        .selectFrom('vault_cards')
        .select((inner) => ['id', inner.val(now + ERASE_AFTER_MS).as('due_at')])
        .where('id', '=', vaultId)
        .where('erased_at', 'is', null),
    )
    .onConflict((conflict) =>
      conflict.column('vault_id').doUpdateSet((eb) => ({ due_at: eb.ref('excluded.due_at') })),
    )
    .execute();
}

/**
 * One batch of due erasures, in the caller's transaction; says how many it looked at (the batch ends the
 * sweep when fewer than `limit`) and how many numbers it erased.
 *
 * A vault entry no card in a wallet holds any more, and that no PAYMENT_CREDENTIALS webhook on its way
 * still needs, loses its encrypted number, its keyed hash and its network token. The row stays, emptied,
 * because the removed cards (and the credentials requests and orders naming them) still refer to it; the
 * same number saved again is a new entry. An entry a wallet still holds leaves the schedule (its removal
 * schedules it again); one a webhook still needs, or a card being saved holds, is looked at again
 * RECHECK_AFTER_MS later.
 *
 * On PostgreSQL the entries are locked before anything is checked, skipping those a card being saved
 * holds (CardVault.store): an entry is never emptied under a card saved meanwhile.
 */
export async function eraseDueCards(
  trx: Kysely<Database>,
  engine: Engine,
  now: number,
  limit: number,
): Promise<{ considered: number; erased: number }> {
  const due = await trx
    .selectFrom('vault_erasures')
    .selectAll()
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .limit(limit)
    .execute();
  if (due.length === 0) return { considered: 0, erased: 0 };
  const ids = due.map((entry) => entry.vault_id);

  const locked = new Set(
    engine === 'postgres'
      ? (
          await trx
            .selectFrom('vault_cards')
            .select('id')
            .where('id', 'in', ids)
            .forUpdate()
            .skipLocked()
            .execute()
        ).map((row) => row.id)
      : ids,
  );
  // Read after the lock, so a card saved or a request acknowledged before it is seen.
  const holders = locked.size === 0 ? [] : await holdersOf(trx, [...locked]);
  const held = new Set(holders.filter((card) => card.removed_at === null).map((card) => card.vault_id));
  const needed = new Set(holders.map((card) => card.vault_id));

  const erase = ids.filter((id) => locked.has(id) && !needed.has(id));
  if (erase.length > 0) {
    await trx.deleteFrom('network_tokens').where('vault_id', 'in', erase).execute();
    await trx
      .updateTable('vault_cards')
      .set({ pan_ciphertext: '', pan_hmac: '', erased_at: now })
      .where('id', 'in', erase)
      .execute();
    await trx.deleteFrom('vault_erasures').where('vault_id', 'in', erase).execute();
  }
  // Unless a removal put it off meanwhile, which the schedule's due time then says.
  for (const { vault_id, due_at } of due.filter((entry) => !erase.includes(entry.vault_id))) {
    const unchanged = { vault_id, due_at };
    if (held.has(vault_id) && locked.has(vault_id)) {
      await trx
        .deleteFrom('vault_erasures')
        .where((eb) => eb.and(unchanged))
        .execute();
    } else {
      await trx
        .updateTable('vault_erasures')
        .set({ due_at: now + RECHECK_AFTER_MS })
        .where((eb) => eb.and(unchanged))
        .execute();
    }
  }
  return { considered: due.length, erased: erase.length };
}

/**
 * The cards holding these vault entries: in a wallet still, with a PAYMENT_CREDENTIALS webhook on its
 * way, or paying an order the service is still paying (PROCESSING, not handed to the merchant): a
 * payment whose answer was lost may have to be sent again.
 */
function holdersOf(trx: Kysely<Database>, vaultIds: string[]) {
  return trx
    .selectFrom('cards')
    .select(['vault_id', 'removed_at'])
    .where('vault_id', 'in', vaultIds)
    .where((eb) => {
      // Evaluated once, from the outbox's state index: webhooks on their way are few.
      const onTheirWay = eb
        .selectFrom('credentials_requests')
        .select('payment_id')
        .where(
          'id',
          'in',
          eb
            .selectFrom('webhook_messages')
            .select('subject_id')
            .where('state', '=', 'PENDING')
            .where('event_name', '=', PAYMENT_CREDENTIALS),
        );
      const paying = eb
        .selectFrom('orders')
        .select('payment_id')
        .where('status', '=', 'PROCESSING')
        .where('session_id', 'is', null);
      return eb.or([eb('removed_at', 'is', null), eb('id', 'in', onTheirWay), eb('id', 'in', paying)]);
    })
    .execute();
}
