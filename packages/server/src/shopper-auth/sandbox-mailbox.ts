import type { Db } from '../db/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../log.js';
import { normalizeEmail } from './codes.js';
import type { Message, MessageSender } from './messages.js';
import * as repo from './repo.js';

/** Most messages `GET /sandbox/messages` answers with: the newest are the ones a tester wants. */
const LIST_LIMIT = 50;

export interface SandboxMessage extends Message {
  sentAt: Date;
}

/**
 * Staging's sender: each message goes to the log and to a table, so that `GET /sandbox/messages?to=`
 * answers from whichever process serves it; with `SMTP_URL` set it comes after the SMTP server took the
 * message. In staging a code is test data, not a secret; production never builds this sender.
 */
export class SandboxMailbox implements MessageSender {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #now: () => number;
  readonly #said: string;

  /** `delivered`: an SMTP server has taken each message before this sender keeps it. */
  constructor(options: { db: Db; log: Logger; now?: () => number; delivered?: boolean }) {
    this.#db = options.db;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
    this.#said = options.delivered
      ? 'message to a shopper (staging: e-mailed, and kept for GET /sandbox/messages)'
      : 'message to a shopper (staging: kept for GET /sandbox/messages, not delivered)';
  }

  async send(message: Message): Promise<void> {
    await repo.insertSandboxMessage(this.#db.kysely, {
      id: newId('sandboxMessage'),
      recipient: message.to,
      recipient_normalized: normalizeEmail(message.to),
      subject: message.subject,
      body: message.text,
      sent_at: this.#now(),
    });
    this.#log.info({ to: message.to, subject: message.subject, text: message.text }, this.#said);
  }

  /** Messages to `to` (any case), newest first. */
  async list(to: string): Promise<SandboxMessage[]> {
    const rows = await repo.listSandboxMessages(this.#db.kysely, normalizeEmail(to), LIST_LIMIT);
    return rows.map((row) => ({
      to: row.recipient,
      subject: row.subject,
      text: row.body,
      sentAt: new Date(row.sent_at),
    }));
  }
}
