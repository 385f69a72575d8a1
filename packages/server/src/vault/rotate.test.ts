import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeInVault } from '../test-support/cards.js';
import { engines, openTestDb } from '../test-support/db.js';
import { legacyEnvelope } from '../test-support/legacy-envelope.js';
import { insertMerchantRow } from '../test-support/rows.js';
import { KeyRing, type KeyRingKey } from './keyring.js';
import { keyIdsInUse, reencryptAll } from './rotate.js';
import { SandboxTokenService } from './sandbox-token-service.js';
import { CardVault } from './vault.js';

const PANS = ['4111111111111111', '5555555555554444', '378282246310005'];

describe.each(engines())('reencryptAll on %s', (engine) => {
  let handle: Awaited<ReturnType<typeof openTestDb>>;
  const oldKey: KeyRingKey = { id: 'old', key: randomBytes(32) };
  const newKey: KeyRingKey = { id: 'new', key: randomBytes(32) };
  const oldRing = new KeyRing([oldKey]);
  const newRing = new KeyRing([newKey, oldKey]);
  const vaultIds: string[] = [];
  const tokens = new Map<string, string>();

  beforeAll(async () => {
    handle = await openTestDb(engine);
    const { kysely } = handle.db;
    const vault = new CardVault(handle.db, oldRing);
    const tokenService = new SandboxTokenService(handle.db, oldRing, vault);
    for (const pan of PANS) {
      const vaultId = await storeInVault(handle.db, vault, pan);
      vaultIds.push(vaultId);
      const token = await tokenService.networkToken({ vaultId, brand: 'visa' });
      tokens.set(vaultId, token.token.reveal());
    }
    // Rows of the other envelope columns, sealed as their writers seal them (see rotate.ts); the processor
    // response as it was sealed before envelopes were bound to their column.
    await insertMerchantRow(handle.db, 'mch_1', { authorization_mode: 'merchant' });
    await kysely
      .insertInto('webhook_secrets')
      .values({
        id: 'wss_1',
        merchant_id: 'mch_1',
        secret_ciphertext: oldRing.seal('whsec_secret', 'webhook_secrets.secret_ciphertext', 'mch_1'),
        created_at: 1,
        expires_at: null,
      })
      .execute();
    await kysely
      .insertInto('shoppers')
      .values({
        id: 'shp_1',
        email: 'a@b.c',
        email_normalized: 'a@b.c',
        first_name: 'A',
        last_name: 'B',
        created_at: 1,
      })
      .execute();
    const { id: addressId } = await kysely
      .insertInto('addresses')
      .values({
        external_id: 'addr_1',
        shopper_id: 'shp_1',
        first_name: 'A',
        last_name: 'B',
        address1: '1 Main St',
        city: 'Austin',
        state: 'TX',
        zip: '78701',
        country: 'US',
        is_default_billing: 1,
        is_default_shipping: 1,
        created_at: 1,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await kysely
      .insertInto('cards')
      .values({
        id: 'card_1',
        shopper_id: 'shp_1',
        vault_id: vaultIds[0] as string,
        billing_address_id: addressId,
        brand: 'visa',
        last4: '1111',
        exp_month: 12,
        exp_year: 2099,
        name_on_card: 'A B',
        is_default: 1,
        needs_cvv: 0,
        created_at: 1,
      })
      .execute();
    await kysely
      .insertInto('sessions')
      .values({ id: 'ses_1', merchant_id: 'mch_1', shopper_id: 'shp_1', created_at: 1, expires_at: 2 })
      .execute();
    await kysely
      .insertInto('credentials_requests')
      .values({
        id: 'crq_1',
        merchant_id: 'mch_1',
        session_id: 'ses_1',
        payment_id: 'card_1',
        amount: 100,
        currency: 'USD',
        merchant_reference: 'r1',
        webhook_message_id: 'msg_1',
        created_at: 1,
      })
      .execute();
    await insertExternalResponse('ext_1', legacyEnvelope(oldKey, '{"approved":true}', 'ext_1'));
    const order = (id: string, details: string | null) => ({
      id,
      merchant_id: 'mch_1',
      merchant_order_id: null,
      origin: 'https://shop.example',
      status: details ? ('SUCCEEDED' as const) : ('CREATED' as const),
      currency: 'USD',
      line_items: '[]',
      subtotal: 0,
      total: 0,
      description: null,
      email: null,
      shopper_id: null,
      payment_id: null,
      shipping_address_id: null,
      billing_address_id: null,
      shipping_method: null,
      shipping_amount: null,
      tax_amount: null,
      charged_amount: null,
      transaction_details_ciphertext:
        details && oldRing.seal(details, 'orders.transaction_details_ciphertext', id),
      error_code: null,
      error_message: null,
      expires_at: 2,
      created_at: 1,
      updated_at: 1,
    });
    // An unpaid order has no transaction details: rotation must pass over the null.
    await kysely
      .insertInto('orders')
      .values([order('ord_paid', '{"gatewayTransactionId":"gtx_1"}'), order('ord_open', null)])
      .execute();
  });
  afterAll(() => handle.close());

  /** A processor response reported for credentials request crq_1, its raw body sealed as given. */
  async function insertExternalResponse(id: string, ciphertext: string): Promise<void> {
    await handle.db.kysely
      .insertInto('external_responses')
      .values({
        id,
        merchant_id: 'mch_1',
        credentials_request_id: 'crq_1',
        payment_id: 'card_1',
        amount: 100,
        currency: 'USD',
        psp_host_name: 'psp',
        psp_raw_response_ciphertext: ciphertext,
        is_recurring: 0,
        created_at: 1,
      })
      .execute();
  }

  async function envelopes(): Promise<string[]> {
    const { kysely } = handle.db;
    return [
      ...(await kysely.selectFrom('vault_cards').select('pan_ciphertext as e').execute()),
      ...(await kysely.selectFrom('network_tokens').select('token_ciphertext as e').execute()),
      ...(await kysely.selectFrom('webhook_secrets').select('secret_ciphertext as e').execute()),
      ...(await kysely.selectFrom('external_responses').select('psp_raw_response_ciphertext as e').execute()),
      ...(await kysely
        .selectFrom('orders')
        .select('transaction_details_ciphertext as e')
        .where('transaction_details_ciphertext', 'is not', null)
        .execute()),
    ].map((row) => row.e as string);
  }

  it('lists the keys stored values need, each with a column that needs it', async () => {
    const { kysely } = handle.db;
    const cryptogramKey = (key: string | null) =>
      kysely
        .updateTable('credentials_requests')
        .set({ cryptogram_key_id: key })
        .where('id', '=', 'crq_1')
        .execute();
    await cryptogramKey('gone');
    try {
      expect(await keyIdsInUse(handle.db, newRing)).toEqual(
        new Map([
          ['old', 'vault_cards.pan_ciphertext'],
          ['gone', 'credentials_requests.cryptogram_key_id'],
        ]),
      );
      // A rotation opens envelopes only: a cryptogram's key is not one it needs.
      expect(await keyIdsInUse(handle.db, newRing, { envelopesOnly: true })).toEqual(
        new Map([['old', 'vault_cards.pan_ciphertext']]),
      );
    } finally {
      await cryptogramKey(null);
    }
  });

  it('stops at a value sealed under a key the ring lacks, naming VAULT_KEYS, the value and the key', async () => {
    const lacking = new KeyRing([newKey]);
    await expect(reencryptAll(handle.db, lacking)).rejects.toThrow(
      expect.objectContaining({
        name: 'ConfigError',
        message: expect.stringMatching(
          /^VAULT_KEYS: cannot decrypt vault_cards [\w-]+: key "old" is not in the key ring; put it back after the primary key, and run this again$/,
        ),
      }),
    );
  });

  it('re-encrypts every envelope under the new primary key, and then has nothing left to do', async () => {
    expect((await envelopes()).map((e) => newRing.keyIdOf(e))).toEqual(Array(9).fill('old'));
    expect(await reencryptAll(handle.db, newRing)).toEqual({ reencrypted: 9 });
    expect((await envelopes()).map((e) => newRing.keyIdOf(e))).toEqual(Array(9).fill('new'));
    expect([...(await keyIdsInUse(handle.db, newRing)).keys()]).toEqual(['new']);
    expect(await reencryptAll(handle.db, newRing)).toEqual({ reencrypted: 0 });
  });

  it('keeps every value readable with the new ring alone', async () => {
    const onlyNew = new KeyRing([newKey]);
    const vault = new CardVault(handle.db, onlyNew);
    const tokenService = new SandboxTokenService(handle.db, onlyNew, vault);
    for (const [index, vaultId] of vaultIds.entries()) {
      expect((await vault.reveal(vaultId)).reveal()).toBe(PANS[index]);
      const token = await tokenService.networkToken({ vaultId, brand: 'visa' });
      expect(token.token.reveal()).toBe(tokens.get(vaultId));
    }
    const { kysely } = handle.db;
    const secret = await kysely.selectFrom('webhook_secrets').selectAll().executeTakeFirstOrThrow();
    expect(
      onlyNew.open(secret.secret_ciphertext, 'webhook_secrets.secret_ciphertext', secret.merchant_id),
    ).toBe('whsec_secret');
    const response = await kysely.selectFrom('external_responses').selectAll().executeTakeFirstOrThrow();
    expect(
      onlyNew.open(
        response.psp_raw_response_ciphertext,
        'external_responses.psp_raw_response_ciphertext',
        response.id,
      ),
    ).toBe('{"approved":true}');
    const paid = await kysely
      .selectFrom('orders')
      .selectAll()
      .where('id', '=', 'ord_paid')
      .executeTakeFirstOrThrow();
    expect(
      onlyNew.open(
        paid.transaction_details_ciphertext as string,
        'orders.transaction_details_ciphertext',
        paid.id,
      ),
    ).toBe('{"gatewayTransactionId":"gtx_1"}');
  });

  it('rewrites an envelope of version 1 under the primary key as version 2, bound to its column', async () => {
    const { kysely } = handle.db;
    const legacy = legacyEnvelope(newKey, '{"approved":false}', 'ext_2');
    await insertExternalResponse('ext_2', legacy);
    expect(newRing.open(legacy, 'external_responses.psp_raw_response_ciphertext', 'ext_2')).toBe(
      '{"approved":false}',
    );
    expect(await reencryptAll(handle.db, newRing)).toEqual({ reencrypted: 1 });
    const { psp_raw_response_ciphertext: rewritten } = await kysely
      .selectFrom('external_responses')
      .select('psp_raw_response_ciphertext')
      .where('id', '=', 'ext_2')
      .executeTakeFirstOrThrow();
    expect(rewritten.startsWith('v2.new.')).toBe(true);
    expect(newRing.open(rewritten, 'external_responses.psp_raw_response_ciphertext', 'ext_2')).toBe(
      '{"approved":false}',
    );
    expect(() => newRing.decrypt(rewritten, 'ext_2')).toThrow();
  });

  it('recomputes the keyed hashes so de-duplication works under the new key', async () => {
    const vault = new CardVault(handle.db, newRing);
    for (const [index, pan] of PANS.entries()) {
      expect(await storeInVault(handle.db, vault, pan)).toBe(vaultIds[index]);
    }
    const rows = await handle.db.kysely.selectFrom('vault_cards').select('pan_hmac').execute();
    expect(rows).toHaveLength(PANS.length);
    expect(rows.map((row) => row.pan_hmac).sort()).toEqual(PANS.map((pan) => newRing.hmac(pan)).sort());
  });

  it('walks tables larger than one batch', async () => {
    const { kysely } = handle.db;
    const ids = Array.from({ length: 450 }, (_, index) => `vlt_batch${String(index).padStart(4, '0')}`);
    await kysely
      .insertInto('vault_cards')
      .values(
        ids.map((id, index) => ({
          id,
          pan_ciphertext: oldRing.seal(`pan ${index}`, 'vault_cards.pan_ciphertext', id),
          pan_hmac: oldRing.hmac(`pan ${index}`),
          created_at: 1,
        })),
      )
      .execute();
    expect(await reencryptAll(handle.db, newRing)).toEqual({ reencrypted: 450 });
    const rows = await kysely
      .selectFrom('vault_cards')
      .selectAll()
      .where('id', 'like', 'vlt_batch%')
      .orderBy('id')
      .execute();
    expect(rows.every((row) => newRing.keyIdOf(row.pan_ciphertext) === 'new')).toBe(true);
    expect(rows.every((row, index) => row.pan_hmac === newRing.hmac(`pan ${index}`))).toBe(true);
  });
});
