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
 * Staging's sender: nothing leaves the machine. Each message goes to the log and to a table, so that
 * `GET /sandbox/messages?to=` answers from whichever process serves it. In staging a code is test data,
 * not a secret; production never builds this sender.
 */
export class SandboxMailbox implements MessageSender {
  readonly #db: Db;
  readonly #log: Logger;
  readonly #now: () => number;

  constructor(options: { db: Db; log: Logger; now?: () => number }) {
    this.#db = options.db;
    this.#log = options.log;
    this.#now = options.now ?? Date.now;
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
    this.#log.info(
      { to: message.to, subject: message.subject, text: message.text },
      'message to a shopper (staging: kept for GET /sandbox/messages, not delivered)',
    );
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
