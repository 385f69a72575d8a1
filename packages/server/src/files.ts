/** Files of the data folder: the database, its backups and the staging key ring are for their owner only. */
import fs from 'node:fs';
import path from 'node:path';

/** Creates `file` empty, readable and writable by its owner only; fails if it exists. */
export function createPrivateFile(file: string): void {
  const fd = fs.openSync(file, 'wx', 0o600);
  try {
    // The umask may have taken bits off the mode given to open; 0600 is what is meant.
    fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Makes `folder` and those above it that are missing, each for its owner only (mode 0700, less what the
 * umask takes). Not `fs.mkdirSync(…, { recursive: true })`: under /proc it retries forever instead of failing.
 */
export function makeFolders(folder: string): void {
  const missing: string[] = [];
  for (let at = path.resolve(folder); !fs.existsSync(at); at = path.dirname(at)) missing.unshift(at);
  for (const at of missing) {
    try {
      fs.mkdirSync(at, 0o700);
    } catch (error) {
      // Another process starting at the same moment made it first.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

/** A file error's message without Node's code in front: `no such file or directory, open '/x'`. */
export function reasonOf(error: unknown): string {
  return (error as Error).message.replace(/^[A-Z]+: /, '');
}
