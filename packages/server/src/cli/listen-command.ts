/**
 * `webhooks listen`: a webhook receiver for local development, as a merchant's endpoint would be. It
 * checks each delivery's signature with `standardwebhooks`, as a merchant must, answers, and prints one
 * line per webhook: its event, its `webhook-id` and its identifiers, never card data.
 */
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { NotFoundError } from '../errors.js';
import { type Command, defineCommand, UsageError, wholeNumberOption } from './args.js';
import type { Context, Output } from './context.js';
import { waitForSignal } from './service-commands.js';

interface ListenInput {
  merchantId: string | undefined;
  secrets: string[];
  port: number | undefined;
  path: string | undefined;
  status: number;
}

/**
 * What the receiver checks with, where it listens and what it answers; `reload` reads the merchant's
 * secrets again, for a signature that matches none of those it has (a rotation since it started).
 */
type Receiver = Omit<ListenInput, 'merchantId'> & { reload?: () => Promise<string[]> };

/** What is printed of a credential: its type and last four digits. */
function credentialLine(entry: unknown): string {
  const { type, token, pan } = (entry ?? {}) as { type?: unknown; token?: unknown; pan?: unknown };
  const number = typeof token === 'string' ? token : typeof pan === 'string' ? pan : '';
  return `${String(type)} ending ${number.slice(-4)}`;
}

/** An event's top-level identifiers and amounts, and its credentials by type and last four only. */
export function describeEvent(event: Record<string, unknown>): string {
  const fields = Object.entries(event)
    .filter(([name, value]) => name !== 'eventName' && ['string', 'number'].includes(typeof value))
    .map(([name, value]) => `${name}=${value}`);
  if (Array.isArray(event.credentials)) {
    fields.push(`credentials=${event.credentials.map(credentialLine).join(', ')}`);
  }
  return fields.join(' ');
}

/** Where the merchant's webhook URL points on this machine, to listen there unless told otherwise. */
function localTarget(webhookUrl: string | null): { port: number; path: string } | undefined {
  if (!webhookUrl) return undefined;
  const url = new URL(webhookUrl);
  if (url.protocol !== 'http:' || !['localhost', '127.0.0.1', '[::1]'].includes(url.hostname))
    return undefined;
  return { port: Number(url.port || 80), path: url.pathname };
}

const webhooksListen = defineCommand<ListenInput>({
  name: 'webhooks listen',
  summary: 'Receive webhooks on this machine, check their signatures and print them: a local endpoint.',
  options: {
    merchant: {
      type: 'string',
      value: 'ID',
      description:
        "check with this merchant's secrets (both during a rotation); listen on its webhook URL's port and path when that URL is on this machine",
    },
    secret: {
      type: 'string',
      multiple: true,
      value: 'WHSEC',
      description: 'check with this secret (whsec_…) instead; give it twice for both of a rotation',
    },
    port: {
      type: 'string',
      value: 'N',
      description: 'port on 127.0.0.1 (default: the URL of --merchant, else 8080)',
    },
    path: {
      type: 'string',
      value: 'PATH',
      description: 'take only this path (default: any; that of --merchant)',
    },
    status: {
      type: 'string',
      value: 'CODE',
      description: 'answer each good delivery with this status (default 204; e.g. 500 to watch the retries)',
    },
  },
  details: [
    'Prints one line per webhook: the time, the event, its webhook-id, its top-level fields and the status',
    'answered; credentials show as their type and last four digits only. A delivery whose signature does not',
    'check out is answered 400 and printed as refused, with why; a request elsewhere than POST to the path,',
    'answered 404, is printed as ignored. Runs until Ctrl-C (SIGINT), SIGTERM or SIGHUP.',
    'With --json: one line per request, {"eventName", "webhookId", "fields" (as printed), "status"},',
    '{"refused": "<why>"} or {"ignored": "<method> <path>"}.',
  ],
  prepare({ values }) {
    const command = 'webhooks listen';
    const merchantId = typeof values.merchant === 'string' ? values.merchant : undefined;
    const secrets = Array.isArray(values.secret) ? values.secret : [];
    if ((merchantId === undefined) === (secrets.length === 0)) {
      throw new UsageError('give --merchant <id> or --secret <whsec_…>, one of the two', command);
    }
    for (const secret of secrets) {
      if (!secret.startsWith('whsec_'))
        throw new UsageError('--secret must be a webhook secret, whsec_…', command);
      try {
        new Webhook(secret);
      } catch {
        throw new UsageError('--secret is not a webhook secret: whsec_ must be followed by base64', command);
      }
    }
    const path = typeof values.path === 'string' ? values.path : undefined;
    if (path !== undefined && !path.startsWith('/'))
      throw new UsageError(`--path must start with /, got "${path}"`, command);
    return {
      merchantId,
      secrets,
      port: wholeNumberOption(values, 'port', { min: 1, max: 65535 }, command),
      path,
      status: wholeNumberOption(values, 'status', { min: 200, max: 599 }, command) ?? 204,
    };
  },
  // With --secret the receiver needs nothing of the service: a merchant's developer runs it anywhere.
  alone: ({ merchantId, ...receiver }) =>
    merchantId === undefined ? (output) => receive(output, receiver) : undefined,
  async execute(context: Context, input) {
    let { secrets, port, path } = input;
    if (input.merchantId !== undefined) {
      const merchant = await context.merchants.get(input.merchantId);
      if (!merchant)
        throw new NotFoundError('MERCHANT_NOT_FOUND', `merchant ${input.merchantId} does not exist`);
      const reload = () => context.merchants.activeWebhookSecrets(merchant.id);
      secrets = await reload();
      const target = localTarget(merchant.webhookUrl);
      port ??= target?.port;
      path ??= target?.path;
      return receive(context, { secrets, port, path, status: input.status, reload });
    }
    return receive(context, { secrets, port, path, status: input.status });
  },
});

/** Runs the receiver until a stop signal; resolves 0 once it has closed. */
async function receive(output: Output, input: Receiver): Promise<number> {
  const { secrets, port, path } = input;
  let verifiers = secrets.map((secret) => new Webhook(secret));
  const say = (text: string, record: unknown) => output.print(text, record);
  /** The event, or why the signature was refused. */
  const verify = (body: string, headers: Record<string, string>) => {
    let refusal = 'the signature matches none of the secrets';
    for (const verifier of verifiers) {
      try {
        return { event: verifier.verify(body, headers) as Record<string, unknown> };
      } catch (error) {
        refusal = error instanceof Error ? error.message : String(error);
      }
    }
    return { refusal };
  };
  const verifyReloading = async (body: string, headers: Record<string, string>) => {
    const first = verify(body, headers);
    if (first.event !== undefined || input.reload === undefined) return first;
    try {
      verifiers = (await input.reload()).map((secret) => new Webhook(secret));
    } catch (error) {
      return {
        refusal: `the secrets could not be read again: ${error instanceof Error ? error.message : error}`,
      };
    }
    return verify(body, headers);
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const url = new URL(request.url ?? '/', 'http://localhost');
      if (request.method !== 'POST' || (path !== undefined && url.pathname !== path)) {
        response.writeHead(404).end();
        const ignored = `${request.method} ${url.pathname}`;
        say(`${new Date().toISOString()}  ignored ${ignored} (404): listening for POST ${path ?? '/'}`, {
          ignored,
        });
        return;
      }
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = request.headers as Record<string, string>;
      const { event, refusal } = await verifyReloading(body, headers);
      if (event === undefined) {
        response.writeHead(400).end();
        say(`${new Date().toISOString()}  refused: ${refusal}`, { refused: refusal });
        return;
      }
      const webhookId = headers['webhook-id'];
      response.writeHead(input.status).end();
      const fields = describeEvent(event);
      say(
        `${new Date().toISOString()}  ${String(event.eventName)}  ${webhookId}  ${fields}  (answered ${input.status})`,
        { eventName: event.eventName, webhookId, fields, status: input.status },
      );
    });
  });
  const listenPort = port ?? 8080;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', () => resolve());
  }).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EADDRINUSE'
      ? new UsageError(
          `port ${listenPort} is in use: stop what listens there, or give --port`,
          'webhooks listen',
        )
      : error;
  });
  const { port: bound } = server.address() as { port: number };
  output.io.stderr(
    `Listening on http://127.0.0.1:${bound}${path ?? '/'} with ${secrets.length} secret(s); Ctrl-C stops.\n`,
  );
  await (output.io.waitForStop ?? waitForSignal)();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return 0;
}

export const LISTEN_COMMANDS: Command[] = [webhooksListen];
