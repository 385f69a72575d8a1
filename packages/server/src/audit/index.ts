/**
 * The audit trail: every action on merchants, API keys, webhook secrets, gateway accounts, the vault,
 * shoppers' data and webhooks, with who took it and when, recorded in the action's own transaction and
 * chained by hash. Other areas record through `recordAudit`; operators read it with `audit list` and
 * check it with `audit verify`.
 */
export { type Actor, merchantActor, operatorActor, SERVICE_ACTOR, shopperActor } from './actor.js';
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditDetails,
  type AuditEvent,
  type AuditFilter,
  AuditTrail,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
  type NewAuditEvent,
  recordAudit,
  type Verification,
} from './trail.js';
