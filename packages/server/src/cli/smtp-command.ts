/** `smtp test`: sends one message through `SMTP_URL`, as one-time codes are sent. */
import { ConfigError, loadSmtpSettings } from '../config.js';
import { DomainError } from '../errors.js';
import { scrub } from '../log.js';
import { isEmail, SmtpSender } from '../shopper-auth/index.js';
import { type Command, defineCommand, requiredOption, UsageError } from './args.js';
import type { Output } from './context.js';

/** Sends the test message with the environment's SMTP settings and says how it went. */
async function sendTest(output: Output, to: string): Promise<number> {
  const { smtpUrl, smtpFrom, smtpRequireTls } = loadSmtpSettings(output.io.env);
  if (!smtpUrl || !smtpFrom) {
    throw new ConfigError('SMTP_URL', 'is not set: set SMTP_URL and SMTP_FROM to send e-mail');
  }
  const sender = new SmtpSender({ url: smtpUrl, from: smtpFrom, requireTls: smtpRequireTls });
  const started = performance.now();
  try {
    await sender.send({
      to,
      subject: 'Wallet Checkout: test message',
      text: [
        'This message was sent by `npx wallet-checkout smtp test`.',
        'Shoppers get their one-time codes the same way, from this sender.',
      ].join('\n'),
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DomainError('MESSAGE_NOT_SENT', `${sender.server} did not take the message: ${scrub(reason)}`);
  } finally {
    sender.close();
  }
  const milliseconds = Math.round(performance.now() - started);
  output.print(`Sent a test message to ${to} through ${sender.server} (${milliseconds} ms).`, {
    server: sender.server,
    to,
    milliseconds,
  });
  return 0;
}

const smtpTest = defineCommand<{ to: string }>({
  name: 'smtp test',
  summary: 'Send a test e-mail through SMTP_URL, from SMTP_FROM, as shoppers get their one-time codes.',
  options: {
    to: { type: 'string', value: 'ADDRESS', description: 'where the test message goes (required)' },
  },
  details: [
    'Signs in with the credentials of SMTP_URL and sends one short message; nothing is stored.',
    "Exit code 1, with the server's answer, when the server cannot be reached, refuses the sign-in or the message.",
    'With --json: {"server", "to", "milliseconds"}.',
  ],
  prepare({ values }) {
    const to = requiredOption(values, 'to', 'smtp test');
    if (!isEmail(to)) throw new UsageError(`--to: must be an e-mail address, got "${to}"`, 'smtp test');
    return { to };
  },
  // The settings are all it needs: it runs before the service has ever started, or on another machine.
  alone:
    ({ to }) =>
    (output) =>
      sendTest(output, to),
});

export const SMTP_COMMANDS: Command[] = [smtpTest];
