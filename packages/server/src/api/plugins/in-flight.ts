/**
 * The requests being handled, from their first hook until their answer is ready to be written (after
 * every onSend hook of the core plugins, the idempotency record's save among them). A stop waits for
 * them before it closes the database: a request cut at the end of the grace period has lost its client,
 * not its work, and a checkout payment waiting on the gateway then still records the decision and sends
 * its webhook, instead of failing on a closed database.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export class InFlight {
  readonly #requests = new WeakSet<FastifyRequest>();
  #count = 0;
  #idle: Array<() => void> = [];

  get count(): number {
    return this.#count;
  }

  begin(request: FastifyRequest): void {
    this.#requests.add(request);
    this.#count += 1;
  }

  end(request: FastifyRequest): void {
    if (!this.#requests.delete(request)) return;
    this.#count -= 1;
    if (this.#count > 0) return;
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Resolves once no request is being handled, or after `timeoutMs`, with how many still are. */
  async settled(timeoutMs: number): Promise<number> {
    if (this.#count === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.#idle.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    return this.#count;
  }
}

/** Registered before every other plugin: a request begins before any hook of theirs reads the database. */
export const inFlightBegins = fp(async (app: FastifyInstance, options: { inFlight: InFlight }) => {
  const { inFlight } = options;
  app.addHook('onRequest', (request, _reply, done) => {
    inFlight.begin(request);
    done();
  });
});

/**
 * Registered after the plugins whose onSend hooks write to the database. A request ends at its onSend
 * here, whether or not its client is still there (Fastify runs onResponse only for an answer written in
 * full), or at onResponse for an answer that never reached onSend. No route hijacks its reply: one that
 * did would count until the stop's wait ran out.
 */
export const inFlightEnds = fp(async (app: FastifyInstance, options: { inFlight: InFlight }) => {
  const { inFlight } = options;
  app.addHook('onSend', (request, _reply, payload, done) => {
    inFlight.end(request);
    done(null, payload);
  });
  app.addHook('onResponse', (request, _reply, done) => {
    inFlight.end(request);
    done();
  });
});
