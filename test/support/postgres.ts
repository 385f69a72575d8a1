/**
 * A throw-away PostgreSQL cluster for the test suite, started from the machine's PostgreSQL binaries
 * when no server is named in TEST_POSTGRES_URL (and by tests that need a server of their own). It lives
 * in a temporary folder, listens on a free loopback port, runs with fsync off (its data is thrown away)
 * and is stopped when the suite ends.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Cluster {
  url: string;
  stop(): Promise<void>;
}

/** The newest PostgreSQL's programs on this machine (Debian's layout), if any. */
export function findBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** PostgreSQL refuses to run as root: run its programs as the `postgres` user then. */
function asPostgresUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function waitUntilReady(binDir: string, port: number, deadline: number): Promise<void> {
  for (;;) {
    try {
      execFileSync(path.join(binDir, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port)], {
        stdio: 'ignore',
      });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`PostgreSQL did not accept connections on port ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** `tls`: the server also takes TLS connections, with this certificate and key. */
export async function startCluster(
  options: { tls?: { cert: string; key: string } } = {},
): Promise<Cluster | undefined> {
  const binDir = findBinDir();
  if (!binDir) return undefined;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wallet-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const [initCommand, initArgs] = asPostgresUser(path.join(binDir, 'initdb'), [
    '-D',
    dir,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
  ]);
  execFileSync(initCommand, initArgs, { stdio: 'ignore' });
  const tls: string[] = [];
  if (options.tls) {
    // PostgreSQL reads its key only when it is its own user's and nobody else's.
    for (const [name, content] of [
      ['server.crt', options.tls.cert],
      ['server.key', options.tls.key],
    ] as const) {
      fs.writeFileSync(path.join(dir, name), content, { mode: 0o600 });
      if (process.getuid?.() === 0) execFileSync('chown', ['postgres', path.join(dir, name)]);
    }
    tls.push('-c', 'ssl=on');
  }
  const port = await freePort();
  const [command, args] = asPostgresUser(path.join(binDir, 'postgres'), [
    '-D',
    dir,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=300',
    ...tls,
  ]);
  const child = spawn(command, args, { stdio: 'ignore' });
  await waitUntilReady(binDir, port, Date.now() + 30_000);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      // pg_ctl rather than a signal to the child: under runuser the child is not the postmaster.
      const [stopCommand, stopArgs] = asPostgresUser(path.join(binDir, 'pg_ctl'), [
        'stop',
        '-D',
        dir,
        '-m',
        'immediate',
      ]);
      execFileSync(stopCommand, stopArgs, { stdio: 'ignore' });
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
