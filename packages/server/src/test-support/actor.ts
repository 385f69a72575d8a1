import type { Actor } from '../audit/index.js';

/** Whom the audit trail names for what tests do through the services directly. */
export const TEST_ACTOR: Actor = 'operator:test@localhost';
