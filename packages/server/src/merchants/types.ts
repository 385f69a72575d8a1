export const CREDENTIAL_TYPES = ['NETWORK_TOKEN', 'PAN'] as const;
export type CredentialType = (typeof CREDENTIAL_TYPES)[number];

export const VARIANTS = ['standard', 'connected'] as const;
export type Variant = (typeof VARIANTS)[number];

export const AUTHORIZATION_MODES = ['service', 'merchant'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];

export interface ShippingMethod {
  externalId: string;
  name: string;
  /** Integer cents. */
  price: number;
}

export interface TaxSettings {
  /** Rate per state abbreviation in basis points (825 = 8.25 %), applied to the subtotal. */
  ratesByState: Record<string, number>;
}

export interface Merchant {
  id: string;
  name: string;
  webhookUrl: string | null;
  allowedOrigins: string[];
  /** Approved credential types; empty when the merchant is not approved for the credentials flow. */
  credentialTypes: CredentialType[];
  variant: Variant;
  authorizationMode: AuthorizationMode;
  shippingMethods: ShippingMethod[];
  taxSettings: TaxSettings;
  /**
   * Whether its checkout offers shoppers "Remember me on this device" (when the operator's
   * REMEMBER_DEVICE_DAYS is not `off`): false asks for a one-time code at every checkout.
   */
  rememberDevices: boolean;
  createdAt: number;
}
