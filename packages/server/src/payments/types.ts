import type { CredentialType } from '../merchants/types.js';

export interface CredentialsRequestInput {
  paymentId: string;
  sessionId: string;
  /** Integer cents. */
  amount: number;
  merchantReference: string;
  currency: string;
}

export interface ExternalResponseInput {
  paymentId: string;
  pspRawResponse: string;
  amount: number;
  pspHostName: string;
  currency: string;
  isRecurring: boolean;
}

export interface Acknowledgement {
  code: 200;
  message: string;
}

export interface CredentialsAcknowledgement extends Acknowledgement {
  /** Additive to the interface's body: the id to look the request up by. */
  requestId: string;
}

export interface ExternalResponseAcknowledgement extends Acknowledgement {
  /** Additive to the interface's body: the recorded response's id. */
  externalResponseId: string;
  /** Additive: the credentials request the response was linked to. */
  requestId: string;
}

export interface CredentialsRequest {
  id: string;
  merchantId: string;
  sessionId: string;
  paymentId: string;
  amount: number;
  currency: string;
  merchantReference: string;
  webhookMessageId: string;
  createdAt: number;
  /** Which key the token service derives this request's cryptogram under (see TokenService). */
  cryptogramKeyId: string | null;
}

export interface ExternalResponseRecord {
  id: string;
  credentialsRequestId: string;
  pspHostName: string;
  amount: number;
  currency: string;
  isRecurring: boolean;
  createdAt: number;
}

/** The `PAYMENT_CREDENTIALS` webhook body, exactly the interface's section 2.5. */
export interface PaymentCredentialsPayload {
  eventName: 'PAYMENT_CREDENTIALS';
  paymentId: string;
  merchantId: string;
  merchantReference: string;
  cardDetails: { networkType: string };
  billingAddress: {
    firstName: string;
    lastName: string;
    address1: string;
    city: string;
    state: string;
    country: string;
    zipCode: string;
    phoneNumber: string;
  };
  credentials: CredentialEntry[];
}

export type CredentialEntry =
  | {
      type: Extract<CredentialType, 'NETWORK_TOKEN'>;
      token: string;
      cvv: string;
      expirationMonth: string;
      expirationYear: string;
    }
  | { type: Extract<CredentialType, 'PAN'>; pan: string; expirationMonth: string; expirationYear: string };
