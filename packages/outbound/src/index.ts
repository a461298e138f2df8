// Outbound safety (docs/api.md §7) for every process that connects to a URL a user named: the
// scraper's fetches and its rendering proxy, webhook delivery, and the API's webhook validation.
// One guard (OutboundGuard), one error (BlockedTargetError, code BLOCKED_TARGET), one message
// policy. Also the secret box that seals webhook secrets at rest.
export type { AddressClass, AddressRules } from './internal/address.ts';
export { classifyAddress } from './internal/address.ts';
export { BlockedTargetError } from './internal/blocked.ts';
export {
  type GuardOptions,
  OutboundGuard,
  type Resolve,
  resolverFromLookup,
  systemResolve,
} from './internal/guard.ts';
export {
  DEVELOPMENT_SECRET_KEY,
  SecretBox,
  SecretBoxError,
  secretBoxOf,
  secretKeyEnv,
  secretKeyListEnv,
  secretKeysEnv,
} from './internal/secret-box.ts';
export { checkUrlTarget, type TargetCheck } from './internal/url-target.ts';
