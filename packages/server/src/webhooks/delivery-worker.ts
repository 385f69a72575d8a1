/**
 * The delivery worker thread's program (started by WorkerSender, see worker-sender.ts): it builds, signs
 * and sends the attempts the main thread hands it, and answers with their outcomes. It is this thread's
 * composition root, as server.ts is the main thread's: its own database handle, key ring, payload
 * builders and Sender, from the same configuration.
 *
 * It never writes to the database: leases, states and attempt records stay with the main thread, the
 * database's one writer (SQLite's busy handler would otherwise put either thread to sleep). Its handle is
 * made read-only so that a write fails instead; the one write a payload may need, provisioning a card's
 * network token on its first use, is asked of the main thread. It logs nothing: what goes wrong is
 * either an outcome for the attempt record or an error the main thread logs.
 */
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { Merchants } from '../merchants/index.js';
import { ORDER_EVENTS, OrderPayloadBuilder, Orders } from '../orders/index.js';
import { PAYMENT_CREDENTIALS } from '../payments/credentials.js';
import { CredentialsPayloadBuilder } from '../payments/payload.js';
import { PaymentsRepo } from '../payments/repo.js';
import { loadKeyRing } from '../vault/keyring.js';
import { SandboxTokenService } from '../vault/sandbox-token-service.js';
import type { TokenService } from '../vault/token-service.js';
import { CardVault } from '../vault/vault.js';
import { Wallet } from '../wallet/index.js';
import { openReadOnlyDb } from './read-only-db.js';
import { type AttemptOutcome, describeFailure, type MessageForPayload, Sender } from './sender.js';
import { WebhookDestinations } from './url-guard.js';
import type {
  DeliveryWorkerData,
  FromWorker,
  ToWorker,
  WorkerAttempt,
  WorkerOutcome,
} from './worker-sender.js';

/** Connections of the worker's PostgreSQL pool: about three point reads per delivery in flight. */
const POOL_SIZE = 4;

const port = parentPort as MessagePort;
const data = workerData as DeliveryWorkerData;
const post = (message: FromWorker) => port.postMessage(message);

const db = await openReadOnlyDb(data.databaseUrl, {
  poolSize: POOL_SIZE,
  onIdleError: (error) => post({ type: 'warning', message: describeFailure(error, data.timeoutMs) }),
});
// The main thread loaded the same ring first and gave any warning about it.
const keyRing = loadKeyRing({ vaultKeys: data.vaultKeys, dataDir: data.dataDir, warn: () => undefined });
const vault = new CardVault(db, keyRing);
const destinations = new WebhookDestinations(data.env, {
  allowedNetworks: data.allowedNetworks,
  loopback: data.loopback,
});
const credentialsPayload = new CredentialsPayloadBuilder({
  repo: new PaymentsRepo(db),
  merchants: new Merchants({ db, keyRing, env: data.env, webhookDestinations: destinations }),
  wallet: new Wallet(db, vault),
  vault,
  tokens: provisionedByMainThread(new SandboxTokenService(db, keyRing, vault)),
});
/** Orders are only read here: what changing one would need refuses, as the read-only handle does. */
const refuse = (): never => {
  throw new Error('The delivery worker never changes orders.');
};
const orderPayloads = new OrderPayloadBuilder(
  new Orders({
    db,
    keyRing,
    outbox: { newMessage: refuse, insertMessages: refuse },
    dispatcher: { committed: refuse },
  }),
);
const sender = new Sender({
  destinations,
  timeoutMs: data.timeoutMs,
  connectionsPerOrigin: data.connectionsPerOrigin,
  payloads: {
    async build(message: MessageForPayload): Promise<unknown> {
      if (message.eventName === PAYMENT_CREDENTIALS) return credentialsPayload.build(message.subjectId);
      if (ORDER_EVENTS.includes(message.eventName)) return orderPayloads.build(message.subjectId);
      throw new Error(`no payload builder for event ${message.eventName}`);
    },
  },
});

/** Network-token provisions asked of the main thread, by request number. */
const provisions = new Map<number, { resolve(): void; reject(error: Error): void }>();
let provisionCount = 0;
const outcomes: WorkerOutcome[] = [];

port.on('message', (message: ToWorker) => {
  switch (message.type) {
    case 'attempts':
      for (const attempt of message.attempts) void deliver(attempt);
      break;
    case 'provisioned': {
      const waiting = provisions.get(message.id);
      provisions.delete(message.id);
      if (message.error === undefined) waiting?.resolve();
      else waiting?.reject(new Error(message.error));
      break;
    }
    case 'close':
      void close();
      break;
  }
});

// Everything above is loaded and the database is open: the main thread may count on this thread now.
post({ type: 'ready' });

async function deliver(attempt: WorkerAttempt): Promise<void> {
  const { remembered } = attempt;
  if (remembered) credentialsPayload.remember(remembered.request, remembered.card);
  const outcome = await sender.attempt(
    attempt.message,
    Promise.resolve(attempt.endpoint),
    attempt.attemptedAt,
    attempt.sendBy,
  );
  answer(attempt.seq, outcome);
}

function answer(seq: number, outcome: AttemptOutcome): void {
  outcomes.push({ seq, ...outcome });
  // setImmediate: the outcomes of one turn of the event loop go back in one message.
  if (outcomes.length === 1) setImmediate(() => post({ type: 'outcomes', outcomes: outcomes.splice(0) }));
}

/**
 * The token service with provisioning left to the main thread: a card without a token fails to
 * provision here (the handle is read-only), the main thread provisions it, and this thread reads it.
 */
function provisionedByMainThread(tokens: TokenService): TokenService {
  return {
    async networkToken(card) {
      try {
        return await tokens.networkToken(card);
      } catch {
        await new Promise<void>((resolve, reject) => {
          const id = ++provisionCount;
          provisions.set(id, { resolve, reject });
          post({ type: 'provision', id, card: { vaultId: card.vaultId, brand: card.brand } });
        });
        return tokens.networkToken(card);
      }
    },
    cryptogramKeyId: () => tokens.cryptogramKeyId(),
    cryptogram: (token, request) => tokens.cryptogram(token, request),
  };
}

/** Ends once the attempts under way have (the main thread asks only then): pools, then the database. */
async function close(): Promise<void> {
  await sender.close();
  await db.close();
  port.close();
}
