import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Logger } from '../log.js';
import { allOf, type MessageSender } from './messages.js';
import { SandboxMailbox } from './sandbox-mailbox.js';
import { noSender, SmtpSender } from './smtp-sender.js';

export interface Senders {
  /** What the sign-in service sends through. */
  sender: MessageSender;
  /** Staging only: the messages behind `GET /sandbox/messages`. */
  mailbox: SandboxMailbox | undefined;
  close(): void;
}

/**
 * Staging keeps every message in the sandbox mailbox and, with `SMTP_URL`, delivers it too; production
 * delivers by SMTP only, and without `SMTP_URL` refuses to send (and says so at start).
 */
export function createSenders(options: {
  config: Pick<Config, 'env' | 'smtpUrl' | 'smtpFrom'>;
  db: Db;
  log: Logger;
}): Senders {
  const { config, db, log } = options;
  const smtp =
    config.smtpUrl && config.smtpFrom
      ? new SmtpSender({ url: config.smtpUrl, from: config.smtpFrom })
      : undefined;
  const close = () => smtp?.close();
  if (config.env === 'staging') {
    const mailbox = new SandboxMailbox({ db, log });
    return { sender: smtp ? allOf([mailbox, smtp]) : mailbox, mailbox, close };
  }
  if (!smtp) {
    log.warn(
      'SMTP_URL is not set: one-time codes cannot be sent, so shoppers cannot sign in to the checkout',
    );
  }
  return { sender: smtp ?? noSender, mailbox: undefined, close };
}
