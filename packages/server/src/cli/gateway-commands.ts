/**
 * `gateway set|show|remove`: which payment gateway a merchant's payments go to, and its credentials
 * there. Credential values are read from environment variables, never from the command line (which
 * other users of the machine and the shell history see), and are never printed.
 */
import { DomainError, NotFoundError, ValidationError } from '../errors.js';
import {
  DEFAULT_SANDBOX_TIMEOUT_MS,
  GATEWAY_NAMES,
  type GatewayAccount,
  GatewayAccounts,
  MAX_GATEWAY_TIMEOUT_MS,
} from '../gateways/index.js';
import { orderRecords } from '../orders/index.js';
import {
  type Command,
  defineCommand,
  listOption,
  refuseRepeatedNames,
  requiredOption,
  stringOption,
  UsageError,
} from './args.js';
import type { Context } from './context.js';
import { isoTime, jsonTime } from './output.js';

const CREDENTIAL_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
/** Upper case only, as environment variables are named; a pasted secret is refused without being echoed. */
const ENV_NAME = /^[A-Z_][A-Z0-9_]{0,127}$/;

function accountsOf(context: Context): GatewayAccounts {
  return new GatewayAccounts({
    db: context.db,
    keyRing: context.keyRing,
    env: context.config.env,
    sandboxGatewayUrl: context.config.sandboxGatewayUrl,
  });
}

async function requireMerchant(context: Context, merchantId: string): Promise<void> {
  if (!(await context.merchants.get(merchantId))) {
    throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${merchantId} does not exist`);
  }
}

const FORCE = {
  force: {
    type: 'boolean',
    description: 'change the account even while payments through it have no decision yet',
  },
} as const;

/**
 * A payment whose gateway answer was lost is looked up with the account's credentials and timed with its
 * time-out: changed meanwhile, the first decision may not be found, and the payment charged again.
 */
async function refuseWhilePaying(context: Context, merchantId: string, force: boolean): Promise<void> {
  const paying = await orderRecords(context.db, context.keyRing).countPaying(merchantId);
  if (paying > 0 && !force) {
    throw new DomainError(
      'ORDER_STATE_CONFLICT',
      `merchant ${merchantId} has ${paying} payment(s) under way with no decision from its gateway yet; changing the account now could charge them again. Wait until they settle ("order list --merchant ${merchantId} --status PROCESSING"), or pass --force.`,
    );
  }
}

/** A gateway account as --json prints it. */
function accountJson(account: GatewayAccount) {
  return { ...account, createdAt: jsonTime(account.createdAt), updatedAt: jsonTime(account.updatedAt) };
}

function describeAccount(account: GatewayAccount): string {
  const { settings } = account;
  const fields: [string, string][] = [
    ['merchant', account.merchantId],
    ['gateway', settings.gateway],
    ['style', settings.style],
    ['URL', settings.url],
    ['time-out', `${settings.timeoutMs} ms`],
    ['credentials', account.credentialNames.join(', ') || '(none)'],
    ['created', isoTime(account.createdAt)],
    ['updated', isoTime(account.updatedAt)],
  ];
  const width = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${value}`).join('\n');
}

interface SetInput {
  merchantId: string;
  force: boolean;
  settings: { gateway: string; style: string; url: string; timeoutMs: number };
  /** Credential name → the environment variable holding its value. */
  credentials: [string, string][];
}

const gatewaySet = defineCommand<SetInput>({
  name: 'gateway set',
  summary: "Set (or replace) the gateway a merchant's payments are authorized with, and its credentials.",
  positionals: ['merchantId'],
  options: {
    gateway: {
      type: 'string',
      choices: GATEWAY_NAMES,
      description: `the gateway: ${GATEWAY_NAMES.join(', ')} (required)`,
    },
    url: { type: 'string', value: 'URL', description: "the gateway's base URL (required)" },
    style: {
      type: 'string',
      choices: ['json', 'xml'],
      description: 'the sandbox API style, which is also the gatewayResponse merchants get (default json)',
    },
    'timeout-ms': {
      type: 'string',
      value: 'MS',
      description: `time allowed for one authorization, in ms, at most ${MAX_GATEWAY_TIMEOUT_MS} (default ${DEFAULT_SANDBOX_TIMEOUT_MS})`,
    },
    credential: {
      type: 'string',
      multiple: true,
      value: 'NAME=ENV_VAR',
      description: 'a gateway credential, its value read from the environment variable ENV_VAR',
    },
    ...FORCE,
  },
  details: [
    'The account is replaced as a whole: give every credential again. The sandbox gateway reads',
    '`apiKey` (any value). Production refuses the sandbox gateway.',
    'Example: GW_KEY=sk_... wallet-checkout gateway set mch_... --gateway sandbox \\',
    '           --url http://127.0.0.1:4010 --credential apiKey=GW_KEY',
  ],
  prepare({ values, positionals }) {
    const command = 'gateway set';
    const timeout = stringOption(values, 'timeout-ms') ?? String(DEFAULT_SANDBOX_TIMEOUT_MS);
    if (!/^\d+$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > MAX_GATEWAY_TIMEOUT_MS) {
      throw new UsageError(
        `--timeout-ms must be a whole number of milliseconds from 1 to ${MAX_GATEWAY_TIMEOUT_MS}, got "${timeout}"`,
        command,
      );
    }
    const credentials = (listOption(values, 'credential') ?? []).map((raw): [string, string] => {
      const [name = '', variable = '', ...rest] = raw.split('=');
      if (!CREDENTIAL_NAME.test(name) || !ENV_NAME.test(variable) || rest.length > 0) {
        // The argument is not repeated: it may be a secret typed in by mistake.
        throw new UsageError(
          '--credential must be NAME=ENV_VAR, ENV_VAR the upper-case name of an environment variable that holds the value',
          command,
        );
      }
      return [name, variable];
    });
    refuseRepeatedNames(
      'credential',
      credentials.map(([name]) => name),
      command,
    );
    return {
      merchantId: positionals[0] as string,
      force: values.force === true,
      settings: {
        gateway: requiredOption(values, 'gateway', command),
        style: stringOption(values, 'style') ?? 'json',
        url: requiredOption(values, 'url', command),
        timeoutMs: Number(timeout),
      },
      credentials,
    };
  },
  async execute(context, { merchantId, force, settings, credentials }) {
    await requireMerchant(context, merchantId);
    await refuseWhilePaying(context, merchantId, force);
    const values = Object.fromEntries(
      credentials.map(([name, variable]) => {
        const value = context.io.env[variable];
        if (!value) {
          // Not named: a value typed in place of the variable's name must not be echoed.
          throw new ValidationError(
            `credential ${name}: the environment variable given for it in --credential is not set or is empty`,
          );
        }
        return [name, value];
      }),
    );
    const account = await accountsOf(context).set(merchantId, settings, values, context.actor);
    context.print(
      `Set the gateway account of ${merchantId}.\n${describeAccount(account)}`,
      accountJson(account),
    );
    return 0;
  },
});

const gatewayShow = defineCommand<string>({
  name: 'gateway show',
  summary: "Show a merchant's gateway account (credential names only, never their values).",
  positionals: ['merchantId'],
  details: ['With --json and no account, prints {"merchantId": "...", "settings": null}.'],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, merchantId) {
    await requireMerchant(context, merchantId);
    const account = await accountsOf(context).find(merchantId);
    if (account) {
      context.print(describeAccount(account), accountJson(account));
      return 0;
    }
    const fallback =
      context.config.env === 'staging'
        ? `it pays through the sandbox gateway at the service's SANDBOX_GATEWAY_URL (${context.config.sandboxGatewayUrl} in this command's environment).`
        : 'its payments fail with -1 until one is set with "wallet-checkout gateway set".';
    context.print(`Merchant ${merchantId} has no gateway account: ${fallback}`, {
      merchantId,
      settings: null,
    });
    return 0;
  },
});

const gatewayRemove = defineCommand<{ merchantId: string; force: boolean }>({
  name: 'gateway remove',
  summary: "Remove a merchant's gateway account and its credentials.",
  positionals: ['merchantId'],
  options: FORCE,
  details: ['Staging then pays through the sandbox gateway again; production refuses payments.'],
  prepare: ({ values, positionals }) => ({
    merchantId: positionals[0] as string,
    force: values.force === true,
  }),
  async execute(context, { merchantId, force }) {
    await requireMerchant(context, merchantId);
    await refuseWhilePaying(context, merchantId, force);
    const removed = await accountsOf(context).remove(merchantId, context.actor);
    context.print(
      removed
        ? `Removed the gateway account of ${merchantId}.`
        : `Merchant ${merchantId} had no gateway account; nothing to remove.`,
      { merchantId, removed },
    );
    return 0;
  },
});

export const GATEWAY_COMMANDS: Command[] = [gatewaySet, gatewayShow, gatewayRemove];
