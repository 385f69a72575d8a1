import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../log.js';
import { TEST_SHOPPER_EMAIL } from '../sandbox/seed.js';
import { normalizeEmail } from './codes.js';
import { allOf, type MessageSender } from './messages.js';
import { SandboxMailbox } from './sandbox-mailbox.js';
import { noSender, SmtpSender } from './smtp-sender.js';

export interface Senders {
  /** What the sign-in service sends through. */
  sender: MessageSender;
  /** Staging only: the messages behind `GET /sandbox/messages`. */
  mailbox: SandboxMailbox | undefined;
  /**
   * Connects to the SMTP server of `SMTP_URL` and signs in, sending nothing, and logs the outcome, so that
   * a wrong password or an unreachable server shows when the service starts instead of at a shopper's
   * first code. Resolves at once without `SMTP_URL`; never rejects.
   */
  checkSmtp(): Promise<void>;
  close(): void;
}

/**
 * Staging keeps every message in the sandbox mailbox and, with `SMTP_URL`, delivers it too; production
 * delivers by SMTP only, and without `SMTP_URL` refuses to send (and says so at start).
 */
export function createSenders(options: {
  config: Pick<Config, 'env' | 'smtpUrl' | 'smtpFrom' | 'smtpRequireTls'>;
  db: Db;
  log: Logger;
}): Senders {
  const { config, db, log } = options;
  const smtp =
    config.smtpUrl && config.smtpFrom
      ? new SmtpSender({ url: config.smtpUrl, from: config.smtpFrom, requireTls: config.smtpRequireTls })
      : undefined;
  let closed = false;
  const close = () => {
    closed = true;
    smtp?.close();
  };
  const checkSmtp = async () => {
    if (!smtp) return;
    try {
      await smtp.verify();
      if (!closed) log.info({ smtp: smtp.server }, 'the SMTP server accepted the sign-in');
    } catch (error) {
      if (closed) return;
      log.warn(
        { err: error, smtp: smtp.server },
        'the SMTP server cannot be reached or refused the sign-in: shoppers get no one-time codes by e-mail until SMTP_URL is mended',
      );
    }
  };
  if (config.env === 'staging') {
    const mailbox = new SandboxMailbox({ db, log });
    if (!smtp) return { sender: mailbox, mailbox, checkSmtp, close };
    // The server first: the mailbox keeps only what it took, never a code the shopper was told failed,
    // nor a copy for each retry of an e-mail it refused.
    const delivered = allOf([smtp, new SandboxMailbox({ db, log, delivered: true })]);
    const sender: MessageSender = {
      // The test shopper's address (example.com) takes no mail: its messages stay on the machine, so a
      // mail server that is down never stops a test checkout.
      send: (message) =>
        normalizeEmail(message.to) === TEST_SHOPPER_EMAIL ? mailbox.send(message) : delivered.send(message),
    };
    return { sender, mailbox, checkSmtp, close };
  }
  if (!smtp) {
    log.warn(
      'SMTP_URL is not set: one-time codes cannot be sent, so shoppers cannot sign in to the checkout',
    );
  }
  return { sender: smtp ?? noSender, mailbox: undefined, checkSmtp, close };
}
