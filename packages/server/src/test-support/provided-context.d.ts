import 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin URL of the suite's PostgreSQL server; undefined when the run covers SQLite alone. */
    postgresUrl: string | undefined;
  }
}
