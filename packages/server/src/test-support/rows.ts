/**
 * Bare rows for tests of one domain folder that need another folder's row to point at (a merchant for a
 * webhook message, say) without going through that folder's service.
 */
import type { Insertable } from 'kysely';
import type { Db } from '../db/index.js';
import type { MerchantsTable } from '../db/schema.js';

export async function insertMerchantRow(
  db: Db,
  id: string,
  overrides: Partial<Insertable<MerchantsTable>> = {},
): Promise<void> {
  await db.kysely
    .insertInto('merchants')
    .values({
      id,
      name: id,
      webhook_url: null,
      allowed_origins: '[]',
      credential_types: '[]',
      credentials_approved_at: null,
      variant: 'standard',
      authorization_mode: 'service',
      shipping_methods: '[]',
      tax_settings: '{"ratesByState":{}}',
      created_at: 1,
      updated_at: 1,
      ...overrides,
    })
    .execute();
}
