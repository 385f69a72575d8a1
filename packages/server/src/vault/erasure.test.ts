import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { up as addErasure } from '../db/migrations/012_vault_erasure.js';
import { Retention } from '../retention.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { visaNumber } from '../test-support/cards.js';
import { runCli } from '../test-support/cli.js';
import { engines, openTestDb } from '../test-support/db.js';
import { type Receiver, startReceiver, verifiedBody } from '../test-support/receiver.js';
import { credentialsBody, startTestService, type TestService } from '../test-support/service.js';
import { until } from '../test-support/wait.js';
import { type NewAddress, type Shopper, Wallet } from '../wallet/index.js';
import { ERASE_AFTER_MS, eraseDueCards, RECHECK_AFTER_MS } from './erasure.js';
import { KeyRing } from './keyring.js';
import { reencryptAll } from './rotate.js';
import { CardVault, ErasedCardError } from './vault.js';

const FUTURE_YEAR = new Date().getUTCFullYear() + 2;
const ADDRESS: NewAddress = {
  firstName: 'Sam',
  lastName: 'Second',
  address1: '2 Side St',
  city: 'Austin',
  state: 'TX',
  zip: '78702',
  country: 'US',
};

describe.each(engines())('erasure of removed cards on %s', (engine) => {
  let service: TestService;
  let receiver: Receiver;
  let shopper: Shopper;
  let processor: { apiKey: string; webhookSecret: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    // Retries a second apart: a webhook stays on its way while the receiver refuses it.
    service = await startTestService(engine, { CREDENTIALS_RETRY_DELAYS_MS: '1000,1000,1000,1000,1000' });
    shopper = (await service.services.wallet.findShopperByEmail(TEST_SHOPPER_EMAIL)) as Shopper;
    processor = await service.merchant({ webhookUrl: receiver.url });
  });
  afterAll(async () => {
    await service?.close();
    await receiver?.close();
  });

  /** A sweep whose clock reads `shiftMs` ahead; it deletes no message or order (`RETENTION_DAYS=off`). */
  const sweep = (shiftMs: number) => {
    const { db, webhooks, payments, clock } = service.services;
    const now = () => clock.now() + shiftMs;
    return new Retention({ db, days: undefined, webhooks, payments, now }).sweep();
  };
  const erasedBy = async (shiftMs: number) => (await sweep(shiftMs)).erasedCards;
  const LATER = ERASE_AFTER_MS + 60_000;

  const newShopper = async (email: string) => {
    const { wallet } = service.services;
    const created = await wallet.createShopper({ email, firstName: 'Sam', lastName: 'Second' });
    await wallet.addAddress(created.id, ADDRESS);
    return created;
  };
  const saveCard = async (pan: string, owner: Shopper = shopper) => {
    const [address] = await service.services.wallet.listAddresses(owner.id);
    return service.services.wallet.saveCard({
      shopperId: owner.id,
      pan,
      expMonth: 12,
      expYear: FUTURE_YEAR,
      nameOnCard: 'Taylor Shopper',
      billingAddressId: address?.id as number,
    });
  };
  const vaultEntry = (vaultId: string) =>
    service.services.db.kysely
      .selectFrom('vault_cards')
      .selectAll()
      .where('id', '=', vaultId)
      .executeTakeFirstOrThrow();
  const networkTokens = async (vaultId: string) =>
    (
      await service.services.db.kysely
        .selectFrom('network_tokens')
        .select('vault_id')
        .where('vault_id', '=', vaultId)
        .execute()
    ).length;

  /** Asks for credentials for the card; resolves with the request id once acknowledged. */
  const askCredentials = async (paymentId: string, merchantReference: string) => {
    const session = await service.session(processor.apiKey);
    const body = credentialsBody(session, { paymentId, merchantReference });
    const answer = await service.call('POST', '/payments/credentials', { apiKey: processor.apiKey, body });
    expect(answer.status).toBe(200);
    return answer.json.requestId as string;
  };
  const requestState = async (requestId: string) =>
    (await service.call('GET', `/payments/credentials/${requestId}`, { apiKey: processor.apiKey })).json;

  it('erases the number, its keyed hash and its network token an hour after the removal', async () => {
    const pan = visaNumber(500);
    const { card } = await saveCard(pan);
    const requestId = await askCredentials(card.id, 'erased-later');
    await until(async () => (await requestState(requestId)).state === 'DELIVERED');
    expect(await networkTokens(card.vaultId)).toBe(1);

    await service.services.wallet.removeCard(shopper.id, card.id);
    expect(await erasedBy(0)).toBe(0);
    expect((await service.services.vault.reveal(card.vaultId)).reveal()).toBe(pan);

    expect(await erasedBy(LATER)).toBe(1);
    const entry = await vaultEntry(card.vaultId);
    expect(entry).toMatchObject({ pan_ciphertext: '', pan_hmac: '' });
    expect(entry.erased_at).toBeGreaterThan(0);
    expect(await networkTokens(card.vaultId)).toBe(0);
    await expect(service.services.vault.reveal(card.vaultId)).rejects.toBeInstanceOf(ErasedCardError);
    expect(await erasedBy(LATER)).toBe(0);
    // A key rotation passes the emptied entry by.
    expect(await reencryptAll(service.services.db, service.services.keyRing)).toEqual({ reencrypted: 0 });

    // Nor can the merchant send the message again: it would carry the removed card.
    const { messageId } = (await requestState(requestId)).webhook;
    const received = receiver.received.length;
    const resent = await service.call('POST', `/webhooks/messages/${messageId}/resend`, {
      apiKey: processor.apiKey,
    });
    expect([resent.status, resent.json.errorCode]).toEqual([409, 'WEBHOOK_NOT_RESENDABLE']);
    expect(receiver.received.length).toBe(received);

    // Typed again, the number is stored anew, as a new card.
    const again = await saveCard(pan);
    expect(again.created).toBe(true);
    expect(again.card.id).not.toBe(card.id);
    expect(again.card.vaultId).not.toBe(card.vaultId);
    expect((await service.services.vault.reveal(again.card.vaultId)).reveal()).toBe(pan);
  });

  it('keeps a number another wallet still holds until that wallet removes it too', async () => {
    const pan = visaNumber(501);
    const other = await newShopper('second.holder@example.com');
    const mine = (await saveCard(pan)).card;
    const theirs = (await saveCard(pan, other)).card;
    expect(theirs.vaultId).toBe(mine.vaultId);

    await service.services.wallet.removeCard(shopper.id, mine.id);
    expect(await erasedBy(LATER)).toBe(0);
    expect((await service.services.vault.reveal(mine.vaultId)).reveal()).toBe(pan);

    await service.services.wallet.removeCard(other.id, theirs.id);
    expect(await erasedBy(LATER)).toBe(1);
    expect((await vaultEntry(mine.vaultId)).erased_at).not.toBeNull();
  });

  it('keeps the number while a credentials webhook for the card is on its way', async () => {
    const pan = visaNumber(502);
    const { card } = await saveCard(pan);
    receiver.respondWith(500, 500);
    const refused = receiver.next();
    const requestId = await askCredentials(card.id, 'removed-while-retrying');
    await refused;
    await service.services.wallet.removeCard(shopper.id, card.id);
    expect(await erasedBy(LATER)).toBe(0);

    // The retry still carries the number; once delivered, nothing needs it any more, and the erasure
    // looks at it again a while later.
    await until(async () => (await requestState(requestId)).state === 'DELIVERED', 10_000);
    const delivered = receiver.received.at(-1);
    const body = verifiedBody<{ credentials: { type: string; pan?: string }[] }>(
      processor.webhookSecret,
      delivered as NonNullable<typeof delivered>,
    );
    expect(body.credentials.find((entry) => entry.type === 'PAN')?.pan).toBe(pan);
    expect(await erasedBy(LATER)).toBe(0);
    expect(await erasedBy(LATER + RECHECK_AFTER_MS)).toBe(1);
  });

  it('keeps the number while the service is still paying an order with the card', async () => {
    const pan = visaNumber(503);
    const { card } = await saveCard(pan);
    const shop = await service.merchant({ allowedOrigins: ['https://shop.example'] });
    const created = await service.call('POST', '/checkout/orders', {
      body: { merchantId: shop.merchantId, order: { lineItems: [{ SKU: 'TEE', amount: 2500 }] } },
      headers: { origin: 'https://shop.example' },
    });
    const orderId = created.json.orderId as string;
    const [address] = await service.services.wallet.listAddresses(shopper.id);
    await service.services.orders.markProcessing(orderId, {
      email: shopper.email,
      shopperId: shopper.id,
      paymentId: card.id,
      shippingAddressId: null,
      billingAddressId: address?.externalId ?? null,
      shippingMethod: null,
      shippingAmount: 0,
      taxAmount: 0,
      chargedAmount: 2500,
    });
    await service.services.wallet.removeCard(shopper.id, card.id);
    // The gateway's answer was lost: the payment may have to be sent again, with the number.
    expect(await erasedBy(LATER)).toBe(0);
    expect((await service.services.vault.reveal(card.vaultId)).reveal()).toBe(pan);

    // Settled (written directly: a settled order's webhook would count in the recovery test below).
    await service.services.db.kysely
      .updateTable('orders')
      .set({ status: 'FAILED' })
      .where('id', '=', orderId)
      .execute();
    expect(await erasedBy(LATER + RECHECK_AFTER_MS)).toBe(1);
  });

  it('sends a removed card again neither by resend nor recovery, so nothing can put its erasure off', async () => {
    const pan = visaNumber(503);
    const delivered = (await saveCard(pan)).card;
    const deliveredId = await askCredentials(delivered.id, 'resent-after-removal');
    await until(async () => (await requestState(deliveredId)).state === 'DELIVERED');
    const failing = (await saveCard(visaNumber(504))).card;
    receiver.respondWith(500, 500, 500, 500, 500, 500);
    const since = new Date(service.services.clock.now()).toISOString();
    const failedId = await askCredentials(failing.id, 'failed-before-removal');
    await until(async () => (await requestState(failedId)).state === 'FAILED', 15_000);
    await service.services.wallet.removeCard(shopper.id, delivered.id);
    await service.services.wallet.removeCard(shopper.id, failing.id);
    const received = receiver.received.length;

    const { messageId } = (await requestState(deliveredId)).webhook;
    const resent = await service.call('POST', `/webhooks/messages/${messageId}/resend`, {
      apiKey: processor.apiKey,
    });
    expect([resent.status, resent.json]).toEqual([
      409,
      {
        errorCode: 'WEBHOOK_NOT_RESENDABLE',
        errorMessage:
          'The shopper has removed the card this message carries: its card data is not sent again.',
      },
    ]);
    const recovered = await service.call('POST', '/webhooks/messages/recover', {
      apiKey: processor.apiKey,
      body: { since },
    });
    expect(recovered.json).toEqual({ recovered: 0, hasMore: false, notSent: 1 });
    const { databaseUrl, dataDir } = service.services.config;
    const cli = await runCli({ DATABASE_URL: databaseUrl, DATA_DIR: dataDir }, [
      'webhooks',
      'recover',
      '--since',
      since,
    ]);
    expect(cli.stdout).toBe(
      `Sent again 0 webhook message(s) of every merchant given up since ${since}. Not sent again: 1 carrying a card the shopper has removed, whose card data is not sent any more.\n`,
    );
    expect((await requestState(failedId)).state).toBe('FAILED');
    expect(receiver.received.length).toBe(received);
    expect(await erasedBy(LATER)).toBe(2);
  });

  it('schedules, as it migrates, the cards removed before erasure existed', async () => {
    // A database of its own, its erasure taken out again, as the version before it left the database.
    const own = await openTestDb(engine);
    try {
      const { db } = own;
      const vault = new CardVault(db, new KeyRing([{ id: 'k1', key: randomBytes(32) }]));
      const wallet = new Wallet(db, vault);
      const owner = await wallet.createShopper({
        email: 'before@example.com',
        firstName: 'B',
        lastName: 'F',
      });
      const address = await wallet.addAddress(owner.id, ADDRESS);
      const save = async (pan: string) =>
        (
          await wallet.saveCard({
            shopperId: owner.id,
            pan,
            expMonth: 12,
            expYear: FUTURE_YEAR,
            nameOnCard: 'B F',
            billingAddressId: address.id,
          })
        ).card;
      const removed = await save(visaNumber(520));
      const kept = await save(visaNumber(521));
      await wallet.removeCard(owner.id, removed.id);
      const removedAt = (await wallet.findCard(removed.id))?.removedAt as number;
      await db.kysely.schema.dropTable('vault_erasures').execute();
      await db.kysely.schema.dropIndex('cards_vault').execute();
      await db.kysely.schema.alterTable('vault_cards').dropColumn('erased_at').execute();

      await addErasure(db.kysely as unknown as Kysely<unknown>, engine);
      expect(await db.kysely.selectFrom('vault_erasures').selectAll().execute()).toEqual([
        { vault_id: removed.vaultId, due_at: removedAt + ERASE_AFTER_MS },
      ]);
      const later = removedAt + ERASE_AFTER_MS;
      const swept = await db.kysely.transaction().execute((trx) => eraseDueCards(trx, engine, later, 10));
      expect(swept).toEqual({ considered: 1, erased: 1 });
      await expect(vault.reveal(removed.vaultId)).rejects.toBeInstanceOf(ErasedCardError);
      expect((await vault.reveal(kept.vaultId)).reveal()).toBe(visaNumber(521));
    } finally {
      await own.close();
    }
  });

  // SQLite runs one write transaction at a time, so no sweep can run while a card is being saved; on
  // PostgreSQL one can, and must leave alone the entry that card holds.
  if (engine === 'postgres') {
    it('leaves alone the vault entry of a card being saved again while the erasure runs', async () => {
      const pan = visaNumber(510);
      const { card } = await saveCard(pan);
      await service.services.wallet.removeCard(shopper.id, card.id);
      const { db, vault } = service.services;
      const erasedMeanwhile = await db.kysely.transaction().execute(async (trx) => {
        expect(await vault.store(trx, pan)).toBe(card.vaultId);
        return erasedBy(LATER);
      });
      expect(erasedMeanwhile).toBe(0);
      expect((await vault.reveal(card.vaultId)).reveal()).toBe(pan);
      // That transaction saved no card: the number is erased when looked at again.
      expect(await erasedBy(LATER + RECHECK_AFTER_MS)).toBe(1);
    });
  }
});
