export type { AddressClass, AddressRules } from './internal/address.ts';
export { classifyAddress, isAllowedAddress, isIpAddress } from './internal/address.ts';
export type { Resolve, TargetCheck } from './internal/lookup.ts';
export {
  assertAllowedHost,
  BlockedTargetError,
  checkUrlTarget,
  safeLookup,
  systemResolve,
} from './internal/lookup.ts';
export {
  DEVELOPMENT_SECRET_KEY,
  SecretBox,
  SecretBoxError,
  secretKeyEnv,
  secretKeyListEnv,
} from './internal/secret-box.ts';
