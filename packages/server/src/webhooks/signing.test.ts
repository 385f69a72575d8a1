import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../test-support/ports.js';
import { until } from '../test-support/wait.js';
import { Signer, USER_AGENT } from './signing.js';

const require = createRequire(import.meta.url);

const OLD_SECRET = `whsec_${Buffer.from('old secret of 24 bytes!!').toString('base64')}`;
const NEW_SECRET = `whsec_${Buffer.from('new secret of 24 bytes!!').toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.from('some other secret bytes!').toString('base64')}`;

describe('signing', () => {
  const body = JSON.stringify({ eventName: 'PAYMENT_CREDENTIALS', paymentId: 'p1' });
  const at = new Date();

  it('writes the Standard Webhooks headers, verifiable by the standardwebhooks package', () => {
    const headers = new Signer().headers('msg_1', at, body, [NEW_SECRET]);
    expect(headers).toMatchObject({
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
    });
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    expect(new Webhook(NEW_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with every active secret during a rotation, so either one verifies', () => {
    const headers = new Signer().headers('msg_2', at, body, [NEW_SECRET, OLD_SECRET]);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(NEW_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(OLD_SECRET).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(OTHER_SECRET).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  it('does not verify a changed body', () => {
    const headers = new Signer().headers('msg_3', at, body, [NEW_SECRET]);
    expect(() => new Webhook(NEW_SECRET).verify(`${body} `, headers)).toThrow(WebhookVerificationError);
  });

  it('refuses to sign without a secret', () => {
    expect(() => new Signer().headers('msg_4', at, body, [])).toThrow(/no active webhook secret/);
  });
});

/** The receivers docs/credentials-flow.md shows, run as a merchant would run them. */
const DOC_RECEIVERS = [
  {
    name: 'the Python receiver verifying by hand',
    fence: 'python',
    file: 'receiver.py',
    command: 'python3',
    install: ' (apt-get install python3)',
    packages: [],
  },
  {
    name: 'the Node receiver with the standardwebhooks package',
    fence: 'js',
    file: 'receiver.mjs',
    command: process.execPath,
    install: '',
    packages: ['standardwebhooks'],
  },
];

describe.each(DOC_RECEIVERS)('docs/credentials-flow.md: $name', (example) => {
  const doc = fs.readFileSync(new URL('../../../../docs/credentials-flow.md', import.meta.url), 'utf8');
  const signer = new Signer();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doc-receiver-'));
  let receiver: ChildProcess;
  let url = '';
  let printed = '';
  let logged = '';

  beforeAll(async () => {
    const code = new RegExp(`\`\`\`${example.fence}\n([\\s\\S]*?)\`\`\``).exec(doc)?.[1];
    if (code === undefined) throw new Error(`docs/credentials-flow.md has no ${example.fence} block`);
    fs.writeFileSync(path.join(dir, example.file), code);
    for (const name of example.packages) {
      fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
      fs.symlinkSync(
        path.dirname(require.resolve(`${name}/package.json`)),
        path.join(dir, 'node_modules', name),
      );
    }
    const [port] = await freePorts(1);
    url = `http://127.0.0.1:${port}/hooks`;
    receiver = spawn(example.command, [example.file], {
      cwd: dir,
      env: { ...process.env, WALLET_WEBHOOK_SECRET: OLD_SECRET, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    receiver.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
    });
    receiver.stderr?.on('data', (chunk: Buffer) => {
      logged += chunk.toString();
    });
    let failed: Error | undefined;
    receiver.once('error', (error) => {
      failed = error;
    });
    await until(async () => {
      if (failed) throw new Error(`this test runs ${example.command}${example.install}: ${failed.message}`);
      if (receiver.exitCode !== null) throw new Error(`${example.file} exited: ${logged}`);
      return fetch(url, { method: 'POST' }).then(
        () => true,
        () => false,
      );
    });
  });

  afterAll(() => {
    receiver.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const deliver = async (body: string, headers: Record<string, string>) =>
    (await fetch(url, { method: 'POST', headers, body })).status;

  it('accepts a webhook signed with several secrets during a rotation, one of them its own', async () => {
    const body = JSON.stringify({ eventName: 'PAYMENT_CREDENTIALS', merchantReference: 'order-1001' });
    const headers = signer.headers('msg_doc1', new Date(), body, [NEW_SECRET, OTHER_SECRET, OLD_SECRET]);
    expect(await deliver(body, headers)).toBe(204);
    await until(async () => printed.includes('PAYMENT_CREDENTIALS order-1001'));
  });

  it('verifies the bytes received, characters beyond ASCII included', async () => {
    const body = JSON.stringify({ eventName: 'PAYMENT_CREDENTIALS', merchantReference: 'Zoë Ångström' });
    expect(await deliver(body, signer.headers('msg_doc2', new Date(), body, [OLD_SECRET]))).toBe(204);
  });

  it('refuses a body serialized again, another secret, another version and a timestamp over 5 minutes away', async () => {
    const body = '{"eventName": "PAYMENT_CREDENTIALS"}';
    const headers = signer.headers('msg_doc3', new Date(), body, [OLD_SECRET]);
    const minutes = (n: number) => new Date(Date.now() + n * 60_000);
    expect(await deliver(body, headers)).toBe(204);
    expect(await deliver(JSON.stringify(JSON.parse(body)), headers)).toBe(400);
    expect(await deliver(body, signer.headers('msg_doc4', new Date(), body, [OTHER_SECRET]))).toBe(400);
    const v2 = { ...headers, 'webhook-signature': headers['webhook-signature'].replace('v1,', 'v2,') };
    expect(await deliver(body, v2)).toBe(400);
    expect(await deliver(body, signer.headers('msg_doc5', minutes(-4), body, [OLD_SECRET]))).toBe(204);
    expect(await deliver(body, signer.headers('msg_doc6', minutes(-6), body, [OLD_SECRET]))).toBe(400);
    expect(await deliver(body, signer.headers('msg_doc7', minutes(6), body, [OLD_SECRET]))).toBe(400);
  });
});
