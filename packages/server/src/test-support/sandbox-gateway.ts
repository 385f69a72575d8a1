/**
 * The sandbox gateway server for tests, over real HTTP on 127.0.0.1. It is its own package, loaded from
 * its source by path, so the tests need no build step, and by a computed specifier, so it stays out of
 * this package's compilation (rootDir is src).
 */
import { fileURLToPath } from 'node:url';

export interface SandboxGatewayServer {
  url: string;
  close(): Promise<void>;
}

const serverPath = fileURLToPath(new URL('../../../sandbox-gateway/src/server.js', import.meta.url));

/** Starts the sandbox gateway on a free port; `close()` stops it. */
export async function startSandboxGateway(): Promise<SandboxGatewayServer> {
  const gateway = (await import(serverPath)) as {
    startSandboxGateway(options: { port: number; host: string }): Promise<SandboxGatewayServer>;
  };
  return gateway.startSandboxGateway({ port: 0, host: '127.0.0.1' });
}
