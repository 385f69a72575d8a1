/**
 * How the API's HTTP server stops: it takes no new connection and closes idle kept-alive ones at once;
 * the requests under way, and any that arrive meanwhile on connections still open, are answered in full
 * with `Connection: close`, so that a client or load balancer sends its next request on a new connection
 * (to another process) instead of meeting a reset or a refusal. Connections still busy when the grace
 * period ends are cut.
 */
import type { Server, ServerResponse } from 'node:http';

/** What became of the requests answered while the server stopped. */
export interface DrainReport {
  /** Answers sent in full: requests under way when the stop began, and those that came after it. */
  requestsFinished: number;
  /** Requests whose answer was not sent in full: cut at the end of the grace period, or left by the client. */
  requestsCut: number;
}

export class HttpDrain {
  readonly #server: Server;
  /** Answers not yet sent in full. */
  readonly #open = new Set<ServerResponse>();
  #stopping = false;
  #finished = 0;
  #cut = 0;

  constructor(server: Server) {
    this.#server = server;
    // Before the framework's listener: a request that comes during the stop is marked before it is answered.
    server.prependListener('request', (_request, response) => this.#track(response));
  }

  /**
   * Marks every answer not yet begun as the last on its connection, then runs `close` (which closes the
   * server) and waits for it; after `graceMs`, cuts the connections still open so that `close` ends.
   */
  async stop(close: () => Promise<void>, graceMs: number): Promise<DrainReport> {
    this.#stopping = true;
    for (const response of this.#open) lastOnConnection(response);
    const cut = setTimeout(() => this.#server.closeAllConnections(), graceMs);
    try {
      // Node's server.close() closes the idle connections itself (since Node 19).
      await close();
    } finally {
      clearTimeout(cut);
    }
    return { requestsFinished: this.#finished, requestsCut: this.#cut };
  }

  #track(response: ServerResponse): void {
    this.#open.add(response);
    if (this.#stopping) lastOnConnection(response);
    response.once('close', () => {
      this.#open.delete(response);
      if (!this.#stopping) return;
      if (response.writableFinished) this.#finished += 1;
      else this.#cut += 1;
      // An answer whose headers had gone before the stop kept its connection open: close it now it is
      // idle, rather than leave it to the keep-alive time-out (72 s) or the end of the grace period.
      this.#server.closeIdleConnections();
    });
  }
}

/** The client sends its next request on a new connection, and Node closes this one once it is answered. */
function lastOnConnection(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}
