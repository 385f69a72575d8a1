/** `merchant …`, `apikey …` and `webhook-secret rotate`: operator tasks on merchant accounts. */
import { NotFoundError, ValidationError } from '../errors.js';
import {
  CREDENTIAL_TYPES,
  type CreateMerchantInput,
  type CredentialType,
  DEFAULT_CACHE_TTL_MS,
  MAX_OVERLAP_SECONDS,
  type MerchantPatch,
} from '../merchants/index.js';
import {
  type Command,
  choiceList,
  defineCommand,
  listOption,
  namedWholeNumber,
  type OptionSpec,
  type OptionValues,
  refuseRepeatedNames,
  requiredOption,
  stringOption,
  UsageError,
} from './args.js';
import {
  apiKeyJson,
  apiKeysTable,
  describeMerchant,
  isoTime,
  jsonTime,
  merchantJson,
  merchantsTable,
} from './output.js';

const SETTINGS_OPTIONS: Record<string, OptionSpec> = {
  'webhook-url': {
    type: 'string',
    value: 'URL',
    description: 'where webhooks are delivered (https in production)',
  },
  origin: {
    type: 'string',
    multiple: true,
    value: 'ORIGIN',
    description: 'a page origin allowed to open checkout, scheme://host[:port] (https in production)',
  },
  variant: {
    type: 'string',
    choices: ['standard', 'connected'],
    description: 'checkout variant (default standard)',
  },
  'authorization-mode': {
    type: 'string',
    choices: ['service', 'merchant'],
    description: 'who authorizes payments (default service)',
  },
  'shipping-method': {
    type: 'string',
    multiple: true,
    value: 'NAME=CENTS',
    description: 'a shipping method and its price in cents, e.g. "Ground=599"',
  },
  'tax-rate': {
    type: 'string',
    multiple: true,
    value: 'STATE=BP',
    description: 'a sales tax rate in basis points, e.g. "TX=825" for 8.25 %',
  },
  'remember-devices': {
    type: 'string',
    choices: ['on', 'off'],
    description: 'whether the checkout offers "Remember me on this device" (default on)',
  },
};

/**
 * The service's refusals name its fields (`allowedOrigins[1] must use https…`); the person at the command
 * line typed flags, so a refusal names the flag instead. `credentials` is the flag of the credential types.
 */
function inFlags<T>(work: Promise<T>, credentials: string): Promise<T> {
  return work.catch((error: unknown) => Promise.reject(withFlagNames(error, credentials)));
}

/** A ValidationError whose message starts with a field, with the flag in its place; else `error`. */
function withFlagNames(error: unknown, credentials: string): unknown {
  if (!(error instanceof ValidationError)) return error;
  // Replacement strings: `$1` is the state a tax rate was refused for.
  const flags: [RegExp, string][] = [
    [/^name\b/, '--name'],
    [/^webhookUrl\b/, '--webhook-url'],
    [/^allowedOrigins(\[\d+\])?/, '--origin'],
    [/^variant\b/, '--variant'],
    [/^authorizationMode\b/, '--authorization-mode'],
    [/^shippingMethods(\[\d+\])?(\.\w+)?/, '--shipping-method'],
    [/^taxSettings\.ratesByState\.([^ ]+)/, '--tax-rate $1'],
    [/^taxSettings(\.ratesByState)?/, '--tax-rate'],
    [/^rememberDevices\b/, '--remember-devices'],
    [/^credentialTypes(\[\d+\])?/, credentials],
  ];
  const flag = flags.find(([field]) => field.test(error.message));
  if (!flag) return error;
  return new ValidationError(error.message.replace(...flag));
}

/** The settings flags that were given, as service input (validated by the service). */
function settingsFrom(values: OptionValues, command: string): MerchantPatch {
  const patch: MerchantPatch = {};
  const webhookUrl = stringOption(values, 'webhook-url');
  if (webhookUrl !== undefined) patch.webhookUrl = webhookUrl === '' ? null : webhookUrl;
  const origins = listOption(values, 'origin');
  if (origins) patch.allowedOrigins = origins;
  const variant = stringOption(values, 'variant');
  if (variant !== undefined) patch.variant = variant as MerchantPatch['variant'];
  const mode = stringOption(values, 'authorization-mode');
  if (mode !== undefined) patch.authorizationMode = mode as MerchantPatch['authorizationMode'];
  const methods = listOption(values, 'shipping-method');
  if (methods) {
    patch.shippingMethods = methods.map((raw) => {
      const [name, price] = namedWholeNumber('shipping-method', raw, 'NAME=CENTS', command);
      return { name, price };
    });
  }
  const rates = listOption(values, 'tax-rate')?.map((raw) =>
    namedWholeNumber('tax-rate', raw, 'STATE=BASIS_POINTS', command),
  );
  const remember = stringOption(values, 'remember-devices');
  if (remember !== undefined) patch.rememberDevices = remember === 'on';
  if (rates) {
    refuseRepeatedNames(
      'tax-rate',
      rates.map(([state]) => state),
      command,
    );
    patch.taxSettings = { ratesByState: Object.fromEntries(rates) };
  }
  return patch;
}

const merchantCreate = defineCommand<CreateMerchantInput>({
  name: 'merchant create',
  summary: 'Create a merchant with its first API key and webhook secret (both shown once).',
  options: {
    name: { type: 'string', value: 'NAME', description: 'the merchant name, 1 to 200 characters (required)' },
    ...SETTINGS_OPTIONS,
    'approve-credentials': {
      type: 'string',
      value: 'TYPES',
      description: 'approve the credentials flow for NETWORK_TOKEN, PAN or both (comma-separated)',
    },
  },
  details: ['With --json prints {"merchantId": "...", "apiKey": "...", "webhookSecret": "whsec_..."}.'],
  createsDatabase: true,
  prepare({ values }) {
    const name = requiredOption(values, 'name', 'merchant create');
    const input: CreateMerchantInput = { name, ...settingsFrom(values, 'merchant create') };
    if (input.webhookUrl === null) delete input.webhookUrl;
    const approve = stringOption(values, 'approve-credentials');
    if (approve !== undefined) {
      input.credentialTypes = choiceList(approve, 'approve-credentials', CREDENTIAL_TYPES, 'merchant create');
    }
    return input;
  },
  async execute(context, input) {
    const { merchant, apiKey, webhookSecret } = await inFlags(
      context.merchants.create(input, context.actor),
      '--approve-credentials',
    );
    // Production has no sandbox gateway to fall back on, so a service-mode merchant cannot be paid until
    // it has a gateway account: the default must not go unnoticed.
    if (context.config.env === 'production' && input.authorizationMode === undefined) {
      context.io.stderr(
        `note: ${merchant.id} authorizes payments in service mode (the default), through its gateway account ("gateway set"); for its own processor: wallet-checkout merchant update ${merchant.id} --authorization-mode merchant\n`,
      );
    }
    context.print(
      [
        `Created merchant ${merchant.id} (${merchant.name}).`,
        `  API key:        ${apiKey}`,
        `  Webhook secret: ${webhookSecret}`,
        'Store both now: they are not shown again.',
      ].join('\n'),
      { merchantId: merchant.id, apiKey, webhookSecret },
    );
    return 0;
  },
});

const merchantList = defineCommand<void>({
  name: 'merchant list',
  summary: 'List every merchant, oldest first.',
  prepare() {},
  async execute(context) {
    const merchants = await context.merchants.list();
    context.print(
      merchants.length > 0
        ? merchantsTable(merchants)
        : 'No merchants yet. Create one with: wallet-checkout merchant create --name <name>',
      merchants.map(merchantJson),
    );
    return 0;
  },
});

const merchantShow = defineCommand<string>({
  name: 'merchant show',
  summary: "Show a merchant's settings.",
  positionals: ['merchantId'],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, id) {
    const merchant = await context.merchants.get(id);
    if (!merchant) throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${id} does not exist`);
    const { liveApiKeys, olderWebhookSecretsUntil: olderUntil } =
      await context.merchants.credentialsState(id);
    const secrets =
      olderUntil.length === 0
        ? 'the current one only'
        : `the current one, and ${olderUntil.length} older signing until ${isoTime(olderUntil.at(-1) ?? null)}`;
    context.print(
      describeMerchant(merchant, [
        ['API keys', `${liveApiKeys} live (apikey list)`],
        ['webhook secrets', secrets],
      ]),
      {
        ...merchantJson(merchant),
        liveApiKeys,
        olderWebhookSecretsUntil: olderUntil.map((at) => jsonTime(at)),
      },
    );
    return 0;
  },
});

/** How long a running service may go on with a merchant's settings and secrets as it last read them (its cache). */
const CACHE_SECONDS = DEFAULT_CACHE_TTL_MS / 1000;

/** What a changed setting's confirmation adds: the running services' caches take it up on their own. */
const SEEN_WITHIN = `Running services apply it within ${CACHE_SECONDS} s.`;

const merchantUpdate = defineCommand<{ id: string; patch: MerchantPatch }>({
  name: 'merchant update',
  summary:
    "Change a merchant's settings; list flags (--origin, --shipping-method, --tax-rate) replace the list.",
  positionals: ['merchantId'],
  options: {
    name: { type: 'string', value: 'NAME', description: 'the merchant name, 1 to 200 characters' },
    ...SETTINGS_OPTIONS,
    'clear-origins': { type: 'boolean', description: 'remove every allowed origin' },
    'clear-shipping-methods': { type: 'boolean', description: 'remove every shipping method' },
    'clear-tax-rates': { type: 'boolean', description: 'remove every tax rate' },
  },
  details: ['--webhook-url "" removes the webhook URL.'],
  prepare({ values, positionals }) {
    const patch = settingsFrom(values, 'merchant update');
    const name = stringOption(values, 'name');
    if (name !== undefined) patch.name = name;
    for (const [flag, list] of [
      ['clear-origins', 'origin'],
      ['clear-shipping-methods', 'shipping-method'],
      ['clear-tax-rates', 'tax-rate'],
    ] as const) {
      if (values[flag] && values[list]) {
        throw new UsageError(`--${flag} and --${list} cannot be used together`, 'merchant update');
      }
    }
    if (values['clear-origins']) patch.allowedOrigins = [];
    if (values['clear-shipping-methods']) patch.shippingMethods = [];
    if (values['clear-tax-rates']) patch.taxSettings = { ratesByState: {} };
    if (Object.keys(patch).length === 0) {
      throw new UsageError('"merchant update" needs at least one setting to change', 'merchant update');
    }
    return { id: positionals[0] as string, patch };
  },
  async execute(context, { id, patch }) {
    const merchant = await inFlags(
      context.merchants.update(id, patch, context.actor),
      '--approve-credentials',
    );
    context.print(
      `Updated merchant ${merchant.id}. ${SEEN_WITHIN}\n${describeMerchant(merchant)}`,
      merchantJson(merchant),
    );
    return 0;
  },
});

const merchantApprove = defineCommand<{ id: string; types: CredentialType[] }>({
  name: 'merchant approve-credentials',
  summary: 'Approve a merchant for the credentials flow (PAN and/or network tokens by webhook).',
  positionals: ['merchantId'],
  options: {
    types: {
      type: 'string',
      value: 'TYPES',
      description: 'NETWORK_TOKEN, PAN or both, comma-separated (required); "" withdraws the approval',
    },
  },
  prepare({ values, positionals }) {
    const command = 'merchant approve-credentials';
    const types = choiceList(requiredOption(values, 'types', command), 'types', CREDENTIAL_TYPES, command);
    return { id: positionals[0] as string, types };
  },
  async execute(context, { id, types }) {
    const merchant = await inFlags(context.merchants.approveCredentials(id, types, context.actor), '--types');
    const text =
      merchant.credentialTypes.length > 0
        ? `Merchant ${merchant.id} is approved for ${merchant.credentialTypes.join(', ')}.`
        : `Merchant ${merchant.id} is no longer approved for the credentials flow.`;
    context.print(`${text} ${SEEN_WITHIN}`, merchantJson(merchant));
    return 0;
  },
});

const apikeyCreate = defineCommand<string>({
  name: 'apikey create',
  summary: 'Create another API key for a merchant (shown once).',
  positionals: ['merchantId'],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, merchantId) {
    const { id, apiKey } = await context.merchants.createApiKey(merchantId, context.actor);
    context.print(
      `Created API key ${id} for ${merchantId}:\n  ${apiKey}\nStore it now: it is not shown again.`,
      { id, merchantId, apiKey },
    );
    return 0;
  },
});

const apikeyList = defineCommand<string>({
  name: 'apikey list',
  summary: "List a merchant's API keys (their first characters only).",
  positionals: ['merchantId'],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, merchantId) {
    const keys = await context.merchants.listApiKeys(merchantId);
    context.print(apiKeysTable(keys), keys.map(apiKeyJson));
    return 0;
  },
});

const apikeyRevoke = defineCommand<string>({
  name: 'apikey revoke',
  summary:
    'Revoke an API key, by its id (key_…, see apikey list) or the key itself (sk_…). Running services stop accepting it within 5 seconds.',
  positionals: ['keyIdOrKey'],
  prepare: ({ positionals }) => positionals[0] as string,
  async execute(context, keyIdOrKey) {
    const asked = Date.now();
    const key = await context.merchants.revokeApiKey(keyIdOrKey, context.actor);
    const revokedAt = isoTime(key.revokedAt);
    const said =
      (key.revokedAt ?? asked) < asked
        ? `API key ${key.id} (${key.prefix}…) was already revoked at ${revokedAt}; nothing changed.`
        : `Revoked API key ${key.id} (${key.prefix}…) at ${revokedAt}.`;
    context.print(said, apiKeyJson(key));
    return 0;
  },
});

const webhookSecretRotate = defineCommand<{ merchantId: string; overlapSeconds: number }>({
  name: 'webhook-secret rotate',
  summary: "Replace a merchant's webhook signing secret (the new one is shown once).",
  positionals: ['merchantId'],
  options: {
    'overlap-hours': {
      type: 'string',
      value: 'H',
      description: `hours the old secret keeps signing beside the new one (default 24, at most ${MAX_OVERLAP_SECONDS / 3600}; 0 after a leak)`,
    },
  },
  details: [
    'During the overlap every delivery carries one signature per secret. A running service keeps the',
    `secrets it signs with for ${CACHE_SECONDS} s (its cache), so it signs with the new one, and after`,
    `--overlap-hours 0 stops signing with the old one, up to ${CACHE_SECONDS} s after this command.`,
  ],
  prepare({ values, positionals }) {
    const raw = stringOption(values, 'overlap-hours') ?? '24';
    const most = MAX_OVERLAP_SECONDS / 3600;
    if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) > most) {
      throw new UsageError(
        `--overlap-hours must be a number of hours from 0 to ${most}, got "${raw}"`,
        'webhook-secret rotate',
      );
    }
    return { merchantId: positionals[0] as string, overlapSeconds: Math.round(Number(raw) * 3600) };
  },
  async execute(context, { merchantId, overlapSeconds }) {
    const webhookSecret = await context.merchants.rotateWebhookSecret(merchantId, context.actor, {
      overlapSeconds,
    });
    // As stored: an overlap never lengthens what an earlier rotation gave the older secrets.
    const previousSecretsExpireAt =
      (await context.merchants.olderWebhookSecretsUntil(merchantId)).at(-1) ?? null;
    const until =
      previousSecretsExpireAt !== null
        ? `Older secrets keep signing until ${isoTime(previousSecretsExpireAt)}; a running service signs with the new one within ${CACHE_SECONDS} s.`
        : `Older secrets no longer sign here; a running service may sign with them for up to ${CACHE_SECONDS} s more.`;
    context.print(`New webhook secret for ${merchantId}:\n  ${webhookSecret}\n${until}`, {
      merchantId,
      webhookSecret,
      previousSecretsExpireAt: jsonTime(previousSecretsExpireAt),
    });
    return 0;
  },
});

export const MERCHANT_COMMANDS: Command[] = [
  merchantCreate,
  merchantList,
  merchantShow,
  merchantUpdate,
  merchantApprove,
  apikeyCreate,
  apikeyList,
  apikeyRevoke,
  webhookSecretRotate,
];
