/**
 * How the API's HTTP server stops: it takes no new connection; the requests under way, and any that
 * arrive meanwhile on connections still open, are answered in full with `Connection: close`, so that a
 * client or load balancer sends its next request on a new connection (to another process) instead of
 * meeting a reset or a refusal. A kept-alive connection is closed once it has been quiet for QUIET_MS:
 * closing one the moment the stop begins, as Node's `server.close()` does, resets the requests already on
 * their way on it, which under load is most busy connections. Connections still busy when the grace
 * period ends are cut.
 */
import type { Server, ServerResponse } from 'node:http';
import net from 'node:net';

/** What became of the requests answered while the server stopped. */
export interface DrainReport {
  /** Answers sent in full: requests under way when the stop began, and those that came after it. */
  requestsFinished: number;
  /** Requests whose answer was not sent in full: cut at the end of the grace period, or left by the client. */
  requestsCut: number;
}

/**
 * 100 ms: a client that keeps a connection busy sends its next request within a millisecond of the last
 * answer; one quiet this long is idle, and closing it races nothing.
 */
const QUIET_MS = 100;

interface Connection {
  /** Answers not yet sent in full. */
  open: Set<ServerResponse>;
  /** When it last started or finished an exchange (Date.now()). */
  lastActive: number;
}

export class HttpDrain {
  readonly #server: Server;
  readonly #connections = new Map<net.Socket, Connection>();
  /** Answers whose fate is counted already (cut at the end of the grace period). */
  readonly #counted = new WeakSet<ServerResponse>();
  #stopping = false;
  #finished = 0;
  #cut = 0;

  constructor(server: Server) {
    this.#server = server;
    server.on('connection', (socket: net.Socket) => {
      this.#connections.set(socket, { open: new Set(), lastActive: Date.now() });
      socket.once('close', () => this.#connections.delete(socket));
    });
    // Before the framework's listener: a request that comes during the stop is marked before it is answered.
    server.prependListener('request', (request, response) => this.#track(request.socket, response));
  }

  /**
   * Stops taking connections, marks every answer not yet begun as the last on its connection, closes
   * connections as they fall quiet, then runs `close` (which closes the server) and waits for it; after
   * `graceMs`, cuts the connections still open.
   */
  async stop(close: () => Promise<void>, graceMs: number): Promise<DrainReport> {
    this.#stopping = true;
    for (const { open } of this.#connections.values())
      for (const response of open) lastOnConnection(response);
    // The listening socket only: http.Server's close() would also close every idle connection at once.
    net.Server.prototype.close.call(this.#server);
    const deadline = Date.now() + graceMs;
    while (this.#connections.size > 0 && Date.now() < deadline) {
      this.#closeQuiet();
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS / 2));
    }
    if (this.#connections.size > 0) this.#cutAll();
    await close();
    return { requestsFinished: this.#finished, requestsCut: this.#cut };
  }

  #track(socket: net.Socket, response: ServerResponse): void {
    const connection = this.#connections.get(socket);
    if (connection) {
      connection.open.add(response);
      connection.lastActive = Date.now();
    }
    if (this.#stopping) lastOnConnection(response);
    response.once('close', () => {
      if (connection) {
        connection.open.delete(response);
        connection.lastActive = Date.now();
      }
      if (!this.#stopping || this.#counted.has(response)) return;
      if (response.writableFinished) this.#finished += 1;
      else this.#cut += 1;
    });
  }

  /** Closes the connections with no request under way that have been quiet for QUIET_MS. */
  #closeQuiet(): void {
    const now = Date.now();
    for (const [socket, { open, lastActive }] of this.#connections) {
      if (open.size === 0 && now - lastActive >= QUIET_MS) socket.destroy();
    }
  }

  /** The end of the grace period: the answers still under way are cut, and counted so now. */
  #cutAll(): void {
    for (const { open } of this.#connections.values()) {
      for (const response of open) {
        this.#counted.add(response);
        this.#cut += 1;
      }
    }
    this.#server.closeAllConnections();
  }
}

/** The client sends its next request on a new connection, and Node closes this one once it is answered. */
function lastOnConnection(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}
