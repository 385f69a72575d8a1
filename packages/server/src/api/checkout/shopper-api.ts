/**
 * What the checkout page's API routes share: the shopper token, the order id parameter, and the
 * schemas of the interface's shapes (sections 2.7–2.11) for validation-free serialization and docs.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { headerCount } from '../plugins/input.js';

export const CHECKOUT_TAG = ['Checkout page'];

/** `Authorization: Bearer <shopperToken>`: the token `POST …/otp/verify` gave, sent once. */
export function shopperTokenOf(request: FastifyRequest): string | undefined {
  if (headerCount(request, 'authorization') > 1) return undefined;
  const match = /^Bearer ([A-Za-z0-9_-]{1,200})$/i.exec(request.headers.authorization ?? '');
  return match?.[1];
}

export const SHOPPER_SECURITY = [{ shopperToken: [] }];

export const OrderParams = Type.Object({
  orderId: Type.String({ minLength: 1, maxLength: 64, description: "The service's order id (`ord_…`)." }),
});

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const AddressInfo = Type.Object(
  {
    firstName: Type.String(),
    lastName: Type.String(),
    company: nullable(Type.String()),
    address1: Type.String(),
    address2: nullable(Type.String()),
    city: Type.String(),
    state: Type.String({ description: 'State abbreviation.' }),
    zip: Type.String(),
    country: Type.String(),
    phoneNumber: nullable(Type.String()),
    isDefaultBilling: Type.Boolean(),
    isDefaultShipping: Type.Boolean(),
    externalId: Type.String({ description: 'Address id assigned by the service.' }),
  },
  { description: 'Interface section 2.8.' },
);

export const WalletAddress = Type.Intersect([
  Type.Object({ addressId: Type.Integer({ description: 'Send back as `shippingAddressId`.' }) }),
  AddressInfo,
]);

export const ShippingMethod = Type.Object(
  {
    externalId: Type.String(),
    name: Type.String(),
    price: Type.Integer({ description: 'Integer cents.' }),
  },
  { description: 'Interface section 2.9.' },
);

export const Empty = Type.Object({}, { additionalProperties: false, description: 'No shipping.' });

export const AddressFields = {
  firstName: Type.String({ minLength: 1, maxLength: 100 }),
  lastName: Type.String({ minLength: 1, maxLength: 100 }),
  company: Type.Optional(nullable(Type.String({ maxLength: 100 }))),
  address1: Type.String({ minLength: 1, maxLength: 200 }),
  address2: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
  city: Type.String({ minLength: 1, maxLength: 100 }),
  state: Type.String({ minLength: 1, maxLength: 50, description: 'State abbreviation, such as `TX`.' }),
  zip: Type.String({ minLength: 1, maxLength: 20 }),
  country: Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2, such as `US`.' }),
};

/** An `addressId` the shopper sends back: 2^31 - 1 is the largest address id either database can hold. */
export const AddressId = (description: string) =>
  Type.Integer({ minimum: 1, maximum: 2_147_483_647, description });

/** A card as the shopper types it: at enrolment, and when adding one to the wallet. */
export const CardFields = {
  number: Type.String({
    minLength: 12,
    maxLength: 23,
    description: 'Digits; spaces and dashes are ignored.',
  }),
  expMonth: Type.Integer({ minimum: 1, maximum: 12 }),
  expYear: Type.Integer({ minimum: 2000, maximum: 9999, description: 'Four digits.' }),
};
