/**
 * A real SMTP server on 127.0.0.1 (free port) that keeps what it receives, for testing e-mail delivery
 * without leaving the machine. Plain text unless given a certificate, which it then offers through
 * STARTTLS; with optional password authentication.
 */
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  user: string | undefined;
  /** Whether the message came over TLS (after STARTTLS). */
  secure: boolean;
  /** The raw RFC 5322 message: headers and body. */
  raw: string;
}

export interface TestSmtpServer {
  url: string;
  received: ReceivedMail[];
  /** Every sign-in the server was asked for, by user name, whether it let the client in or not. */
  signIns: string[];
  close(): Promise<void>;
}

/** `tls`: offer STARTTLS with this certificate and key (see tls.ts); the URL then names `localhost`. */
export async function startSmtpServer(
  options: {
    user?: string;
    password?: string;
    rejectRecipients?: boolean;
    tls?: { cert: string; key: string };
  } = {},
): Promise<TestSmtpServer> {
  const received: ReceivedMail[] = [];
  const signIns: string[] = [];
  const server = new SMTPServer({
    ...(options.tls ? { cert: options.tls.cert, key: options.tls.key } : { disabledCommands: ['STARTTLS'] }),
    allowInsecureAuth: true,
    authOptional: options.user === undefined,
    logger: false,
    onAuth(auth, _session, callback) {
      signIns.push(auth.username ?? '');
      if (auth.username === options.user && auth.password === options.password) {
        callback(null, { user: auth.username });
      } else {
        callback(new Error('Invalid username or password'));
      }
    },
    onRcptTo(_address, _session, callback) {
      if (!options.rejectRecipients) return callback();
      const error = Object.assign(new Error('Mailbox unavailable'), { responseCode: 550 });
      callback(error);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        received.push({
          from: from ? from.address : undefined,
          to: session.envelope.rcptTo.map((address) => address.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          secure: session.secure,
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const credentials =
    options.user === undefined
      ? ''
      : `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@`;
  return {
    url: `smtp://${credentials}${options.tls ? 'localhost' : '127.0.0.1'}:${port}`,
    received,
    signIns,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
