import { sql } from 'kysely';
import { SERVICE_ACTOR } from '../audit/index.js';
import type { Db } from '../db/index.js';
import { DomainError } from '../errors.js';
import type { Shopper, Wallet } from '../wallet/index.js';

export const TEST_SHOPPER_EMAIL = 'test.shopper@example.com';

/** Domains that no one's mail is at (RFC 2606 and RFC 6761): addresses there are test addresses. */
const TEST_DOMAINS = ['example.com', 'example.net', 'example.org'];
const TEST_TOP_LEVEL_DOMAINS = ['test', 'example', 'invalid', 'localhost'];

/**
 * Whether `email` is at a domain reserved for tests, where no real shopper can be: what the sandbox's
 * shortcuts serve when staging sends real mail (SMTP_URL set).
 */
export function isTestAddress(email: string): boolean {
  const domain = email
    .slice(email.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
  return TEST_DOMAINS.includes(domain) || TEST_TOP_LEVEL_DOMAINS.includes(domain.split('.').at(-1) ?? '');
}

/** The rule `isTestAddress` holds, for an answer that refuses another address. */
export const TEST_ADDRESS_RULE =
  'with SMTP_URL set, staging may hold real shoppers, so this serves only test addresses: at example.com, example.net or example.org, or under .test, .example, .invalid or .localhost';

/**
 * What the sandbox gateway answers for a card: approval, or the interface's error codes
 * `995` "Unable to process card", `990` "Card was declined", `-1` with a null message.
 */
export type TestCardOutcome = 'approved' | '995' | '990' | '-1';

export interface TestCard {
  pan: string;
  last4: string;
  brand: 'visa' | 'mastercard';
  outcome: TestCardOutcome;
}

/** The test shopper's cards, the default (Visa 1111) first. */
export const TEST_CARDS: readonly TestCard[] = [
  { pan: '4111111111111111', last4: '1111', brand: 'visa', outcome: 'approved' },
  { pan: '5555555555554444', last4: '4444', brand: 'mastercard', outcome: 'approved' },
  { pan: '4000000000000002', last4: '0002', brand: 'visa', outcome: '995' },
  { pan: '4000000000000069', last4: '0069', brand: 'visa', outcome: '990' },
  { pan: '4000000000000119', last4: '0119', brand: 'visa', outcome: '-1' },
];

/** Cards stay valid for a while after seeding: three years, expiring in December. */
const CARD_LIFE_YEARS = 3;

/**
 * Creates the staging test shopper with one default address and the test cards, at every start. What
 * exists is kept as it is (a nickname, an edited address), so a second run creates nothing; a test card
 * the shopper removed comes back, so every start offers the cards the docs list. One that would not fit a
 * full wallet is left out rather than stopping the start.
 */
export async function seedStaging(db: Db, wallet: Wallet): Promise<Shopper> {
  if (db.engine !== 'postgres') return seed(wallet);
  // Processes starting together on one database take turns: each would otherwise find no address yet
  // while another was creating the shopper's. Held by a connection of its own, which a crash releases.
  return db.kysely.connection().execute(async (connection) => {
    await sql`select pg_advisory_lock(hashtextextended(${SEED_LOCK}, 0))`.execute(connection);
    try {
      return await seed(wallet);
    } finally {
      await sql`select pg_advisory_unlock(hashtextextended(${SEED_LOCK}, 0))`.execute(connection);
    }
  });
}

/** The name of the PostgreSQL advisory lock seeding takes. */
const SEED_LOCK = 'wallet-checkout:staging-seed';

async function seed(wallet: Wallet): Promise<Shopper> {
  const existing = await wallet.findShopperByEmail(TEST_SHOPPER_EMAIL);
  // The first seeding is no event; a card put back into the shopper's wallet later is one.
  const by = existing ? { actor: SERVICE_ACTOR } : undefined;
  const shopper = existing ?? (await createTestShopper(wallet));
  if (shopper === undefined) {
    // On SQLite, another process starting at the same moment created the shopper first, and seeds the rest.
    return (await wallet.findShopperByEmail(TEST_SHOPPER_EMAIL)) as Shopper;
  }
  const [existingAddress] = await wallet.listAddresses(shopper.id);
  const address =
    existingAddress ??
    (await wallet.addAddress(shopper.id, {
      firstName: 'Taylor',
      lastName: 'Shopper',
      address1: '100 Congress Ave',
      city: 'Austin',
      state: 'TX',
      zip: '78701',
      country: 'US',
      phoneNumber: '+15125550100',
      isDefaultBilling: true,
      isDefaultShipping: true,
    }));
  const expYear = new Date().getUTCFullYear() + CARD_LIFE_YEARS;
  const held = await wallet.listCards(shopper.id);
  // One after the other: the first card saved (Visa 1111) becomes the default.
  for (const card of TEST_CARDS) {
    if (held.some((kept) => kept.last4 === card.last4 && kept.brand === card.brand)) continue;
    await wallet
      .saveCard(
        {
          shopperId: shopper.id,
          pan: card.pan,
          expMonth: 12,
          expYear,
          nameOnCard: 'Taylor Shopper',
          billingAddressId: address.id,
        },
        by,
      )
      .catch((error: unknown) => {
        if (!(error instanceof DomainError && error.errorCode === 'WALLET_FULL')) throw error;
      });
  }
  return shopper;
}

/** The test shopper, or undefined when another process has just created it. */
async function createTestShopper(wallet: Wallet): Promise<Shopper | undefined> {
  try {
    return await wallet.createShopper({
      email: TEST_SHOPPER_EMAIL,
      phone: '+15125550100',
      firstName: 'Taylor',
      lastName: 'Shopper',
    });
  } catch (error) {
    if (error instanceof DomainError && error.errorCode === 'SHOPPER_ALREADY_EXISTS') return undefined;
    throw error;
  }
}
