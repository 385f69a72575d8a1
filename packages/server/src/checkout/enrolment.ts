/**
 * Enrolment of a new shopper in the checkout: the details wait (sealed, without the CVV) for the
 * one-time code that proves the email; the proof creates the shopper, the address and the card. The
 * only table read or written here is `pending_enrolments` (migration `005_enrolments`).
 */
import type { Db } from '../db/index.js';
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import { newId } from '../ids.js';
import { CODE_TTL_MS, type CodeRequestResult, type ShopperAuth } from '../shopper-auth/index.js';
import type { KeyRing } from '../vault/keyring.js';
import { cardNetwork, validatePan } from '../vault/vault.js';
import type { Wallet } from '../wallet/index.js';
import { changedBy, panAs } from './common.js';

export interface EnrolmentAddress {
  company?: string | null;
  address1: string;
  address2?: string | null;
  city: string;
  state: string;
  zip: string;
  /** ISO 3166-1 alpha-2, such as `US`. */
  country: string;
}

export interface EnrolInput {
  email: string;
  firstName: string;
  lastName: string;
  phone: string;
  card: {
    number: string;
    expMonth: number;
    /** Four digits. */
    expYear: number;
    /**
     * Checked for form only; the checkout page sends it again with the payment. Never stored, and not
     * taken at all for a merchant that authorizes payments itself.
     */
    cvv?: string;
  };
  billingAddress: EnrolmentAddress;
}

/** What waits for the code: the input without the CVV. */
type PendingDetails = Omit<EnrolInput, 'card'> & { card: Omit<EnrolInput['card'], 'cvv'> };

function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A card is good through the last day of its expiry month (UTC), as the wallet counts it. */
function checkCard(card: EnrolInput['card'], now: number): string {
  const pan = card.number.replace(/[\s-]/g, '');
  try {
    validatePan(pan);
  } catch (error) {
    panAs('card.number')(error);
  }
  if (!cardNetwork(pan)) throw new ValidationError('card.number: the card network is not recognised');
  if (now >= Date.UTC(card.expYear, card.expMonth, 1)) {
    throw new ValidationError('card.expMonth/expYear: the card has expired');
  }
  return pan;
}

export class Enrolments {
  readonly #now: () => number;

  constructor(
    private readonly deps: {
      db: Db;
      keyRing: KeyRing;
      wallet: Wallet;
      shopperAuth: ShopperAuth;
      now?: () => number;
    },
  ) {
    this.#now = deps.now ?? Date.now;
  }

  /**
   * Keeps the new shopper's details for `orderId` (replacing an earlier enrolment of the same email
   * there) and sends the code that proves the email, counted against `client` as in `requestCode`. An
   * email that has a wallet signs in instead.
   */
  async start(orderId: string, input: EnrolInput, client?: string): Promise<CodeRequestResult> {
    const email = normalizeEmail(input.email);
    if (await this.deps.wallet.findShopperByEmail(email)) {
      throw new DomainError(
        'SHOPPER_ALREADY_EXISTS',
        'email: this email has a wallet; sign in with a code instead',
      );
    }
    const now = this.#now();
    const pan = checkCard(input.card, now);
    const details: PendingDetails = {
      email: input.email.trim(),
      firstName: input.firstName,
      lastName: input.lastName,
      phone: input.phone,
      card: { number: pan, expMonth: input.card.expMonth, expYear: input.card.expYear },
      billingAddress: input.billingAddress,
    };
    // The code first: a refused request (throttled, not sent) leaves an earlier enrolment in place.
    const sent = await this.deps.shopperAuth.requestCode(orderId, details.email, { enrol: true, client });
    const id = newId('enrolment');
    await this.deps.db.kysely.transaction().execute(async (trx) => {
      await trx
        .deleteFrom('pending_enrolments')
        .where('order_id', '=', orderId)
        .where('email_normalized', '=', email)
        .execute();
      await trx
        .insertInto('pending_enrolments')
        .values({
          id,
          order_id: orderId,
          email_normalized: email,
          details_ciphertext: this.deps.keyRing.seal(
            JSON.stringify(details),
            'pending_enrolments.details_ciphertext',
            id,
          ),
          created_at: now,
          // As long as the code that completes it.
          expires_at: now + CODE_TTL_MS,
        })
        .execute();
    });
    return sent;
  }

  /**
   * After the code was proved with `shopperToken` (a token without a shopper yet): creates the shopper,
   * the billing address and the card, and signs the token in as that shopper.
   */
  async complete(orderId: string, email: string, shopperToken: string): Promise<void> {
    const { kysely } = this.deps.db;
    const row = await kysely
      .selectFrom('pending_enrolments')
      .selectAll()
      .where('order_id', '=', orderId)
      .where('email_normalized', '=', normalizeEmail(email))
      .where('expires_at', '>', this.#now())
      .executeTakeFirst();
    if (!row) {
      throw new NotFoundError(
        'ENROLMENT_NOT_FOUND',
        'No enrolment waits for this email and order (enrolments last 10 minutes); enrol again.',
      );
    }
    const details = JSON.parse(
      this.deps.keyRing.open(row.details_ciphertext, 'pending_enrolments.details_ciphertext', row.id),
    ) as PendingDetails;
    const { wallet } = this.deps;
    const shopper = await wallet.createShopper({
      email: details.email,
      phone: details.phone,
      firstName: details.firstName,
      lastName: details.lastName,
    });
    const by = changedBy({ shopperId: shopper.id, orderId, proof: 'code' }, { enrolment: true });
    const address = await wallet.addAddress(
      shopper.id,
      {
        firstName: details.firstName,
        lastName: details.lastName,
        phoneNumber: details.phone,
        ...details.billingAddress,
      },
      by,
    );
    await wallet.addCard(
      {
        shopperId: shopper.id,
        pan: details.card.number,
        expMonth: details.card.expMonth,
        expYear: details.card.expYear,
        nameOnCard: `${details.firstName} ${details.lastName}`,
        billingAddressId: address.id,
      },
      by,
    );
    await kysely.deleteFrom('pending_enrolments').where('id', '=', row.id).execute();
    await this.deps.shopperAuth.completeEnrolment(shopperToken, shopper.id);
  }

  /** Deletes enrolments whose code can no longer be proved. */
  async sweep(): Promise<number> {
    const result = await this.deps.db.kysely
      .deleteFrom('pending_enrolments')
      .where('expires_at', '<=', this.#now())
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
