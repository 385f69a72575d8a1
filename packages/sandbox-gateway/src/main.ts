/**
 * Runs the sandbox gateway alone: `node packages/sandbox-gateway/dist/main.js`.
 * PORT (default 4010) and HOST (default 127.0.0.1) choose where it listens.
 */
import { startSandboxGateway } from './server.js';

/** 4010: beside the service's default 4000, out of the way of common development ports. */
const DEFAULT_PORT = 4010;

const port = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  console.error(`PORT must be a port number (0 to 65535), not "${process.env.PORT}"`);
  process.exit(1);
}

const gateway = await startSandboxGateway({ port, host: process.env.HOST || '127.0.0.1', log: true });
console.log(`Sandbox gateway listening on ${gateway.url}`);
console.log(`  JSON style: POST ${gateway.url}/v1/authorizations`);
console.log(`  XML style:  POST ${gateway.url}/xml/authorizations`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    gateway.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
