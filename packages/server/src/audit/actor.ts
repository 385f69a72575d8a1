import os from 'node:os';

/**
 * Who took an action: a person at a command line (`operator:<name>@<host>`), a merchant's server through
 * the API with one of its keys (`merchant:<merchantId>/<apiKeyId>`), a shopper signed in to the checkout
 * (`shopper:<shopperId>`), or the service on its own (`service`).
 */
export type Actor = `operator:${string}` | `merchant:${string}` | `shopper:${string}` | 'service';

export const SERVICE_ACTOR: Actor = 'service';

/** `merchant:<merchantId>/<apiKeyId>`: which of the merchant's keys, when it is known. */
export function merchantActor(merchantId: string, apiKeyId?: string): Actor {
  return apiKeyId === undefined ? `merchant:${merchantId}` : `merchant:${merchantId}/${apiKeyId}`;
}

export function shopperActor(shopperId: string): Actor {
  return `shopper:${shopperId}`;
}

/**
 * The person running a command: `WALLET_OPERATOR` when set (for a shared account), else the user `sudo`
 * was run by, else the account's own name; and the machine it runs on.
 */
export function operatorActor(named: string | undefined, env: Record<string, string | undefined>): Actor {
  return `operator:${named ?? env.SUDO_USER ?? accountName()}@${os.hostname()}`;
}

function accountName(): string {
  try {
    return os.userInfo().username;
  } catch {
    // A container may run as a uid with no account: the uid names it.
    return `uid ${process.getuid?.() ?? 'unknown'}`;
  }
}
