import type { TestProject } from 'vitest/node';
import type {} from '../../packages/server/src/test-support/provided-context.js';
import { type Cluster, startCluster } from './postgres.js';

let cluster: Cluster | undefined;

/**
 * Every database test runs on SQLite and on PostgreSQL. PostgreSQL is the server in TEST_POSTGRES_URL,
 * or else a throw-away cluster started from the machine's PostgreSQL binaries. Without either, CI fails
 * here; a developer's run goes on with SQLite alone and says so.
 */
export async function setup(project: TestProject): Promise<void> {
  let url = process.env.TEST_POSTGRES_URL || undefined;
  if (!url) {
    cluster = await startCluster();
    url = cluster?.url;
  }
  if (!url) {
    const help =
      'PostgreSQL is needed for the PostgreSQL half of the suite: install it (apt-get install postgresql) or set TEST_POSTGRES_URL.';
    if (process.env.CI === 'true') throw new Error(help);
    console.warn(`\n!!! ${help} Running the database tests on SQLite only.\n`);
  }
  project.provide('postgresUrl', url);
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
