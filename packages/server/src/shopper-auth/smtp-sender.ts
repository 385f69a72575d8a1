import nodemailer, { type Transporter } from 'nodemailer';
import { DomainError } from '../errors.js';
import type { Secret } from '../secret.js';
import type { Message, MessageSender } from './messages.js';

/** 10 s to connect and be greeted, 20 s of silence mid-message: the shopper is waiting for the code. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 20_000;

/** Time-outs of one exchange with the server, in ms. */
export interface SmtpTimeouts {
  /** To connect, and then to be greeted. */
  connectMs: number;
  /** Of silence in the middle of an exchange. */
  idleMs: number;
}

/**
 * nodemailer's options for an `smtp://` or `smtps://` URL. Built here rather than passed as `url`:
 * nodemailer then takes the URL's settings alone and drops every other option, the time-outs included.
 */
function transportOptions(url: URL, timeouts: SmtpTimeouts, requireTls: boolean) {
  const secure = url.protocol === 'smtps:';
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    // nodemailer's own defaults: 465 for TLS from the start, 587 otherwise.
    port: url.port ? Number(url.port) : secure ? 465 : 587,
    secure,
    // Without it nodemailer goes on in clear, password and all, with a server that does not offer STARTTLS
    // (or when something on the way strips the offer). The server's certificate is checked either way.
    requireTLS: requireTls && !secure,
    ...(url.username
      ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
      : {}),
    connectionTimeout: timeouts.connectMs,
    greetingTimeout: timeouts.connectMs,
    socketTimeout: timeouts.idleMs,
  };
}

/** Sends e-mail through the SMTP server of `SMTP_URL`, from `SMTP_FROM`. */
export class SmtpSender implements MessageSender {
  readonly #transport: Transporter;
  readonly #from: string;
  /** The server as `smtp://host:port`, without the credentials: for messages and logs. */
  readonly server: string;

  constructor(options: {
    url: Secret<string>;
    from: string;
    /** An `smtp://` server must take STARTTLS before anything is sent (see Config.smtpRequireTls). */
    requireTls: boolean;
    timeouts?: SmtpTimeouts;
  }) {
    const url = new URL(options.url.reveal());
    this.server = `${url.protocol}//${url.host}`;
    this.#transport = nodemailer.createTransport(
      transportOptions(
        url,
        options.timeouts ?? { connectMs: CONNECTION_TIMEOUT_MS, idleMs: SOCKET_TIMEOUT_MS },
        options.requireTls,
      ),
    );
    this.#from = options.from;
  }

  /** Resolves once the server accepted the message; rejects with nodemailer's error otherwise. */
  async send(message: Message): Promise<void> {
    await this.#transport.sendMail({
      from: this.#from,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
  }

  /** Connects and signs in without sending anything; rejects with nodemailer's error as `send` would. */
  async verify(): Promise<void> {
    await this.#transport.verify();
  }

  close(): void {
    this.#transport.close();
  }
}

/** Production without `SMTP_URL`: the service runs, but no shopper can be sent a code. */
export const noSender: MessageSender = {
  async send() {
    throw new DomainError(
      'MESSAGE_NOT_SENT',
      'This service cannot send one-time codes: its operator has not configured e-mail (SMTP_URL).',
    );
  },
};
