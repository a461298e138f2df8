import { type AddressClass, type AddressRules, classify } from './address.ts';

/**
 * A connection refused because its target address may not be used (docs/api.md §7): `code` is the
 * BLOCKED_TARGET of docs/api.md §7. The one message policy: the message names the host and what is wrong
 * with its address ("127.0.0.1 is a private address (loopback)", "shop.example resolves to a
 * private address"), never the address a name resolved to, which would map internal DNS.
 */
export class BlockedTargetError extends Error {
  override readonly name = 'BlockedTargetError';
  readonly code = 'BLOCKED_TARGET';
  /** The host as the caller named it: an IP literal or a name. */
  readonly hostname: string;
  /** The refused address, for logs; the message leaves it out when `hostname` is a name. */
  readonly address: string;
  readonly kind: AddressClass;

  constructor(hostname: string, address: string, rules: AddressRules = {}) {
    const { kind, range } = classify(address, rules);
    super(describeRefusal(hostname, address, kind, range));
    this.hostname = hostname;
    this.address = address;
    this.kind = kind;
  }
}

function describeRefusal(hostname: string, address: string, kind: AddressClass, range: string): string {
  // A public address is refused only by a caller's own rule (a test hook).
  if (kind === 'public')
    return hostname === address
      ? `${hostname} is not an allowed address`
      : `${hostname} resolves to an address that is not allowed`;
  if (hostname !== address) return `${hostname} resolves to a ${kind} address`;
  return range === kind ? `${hostname} is a ${kind} address` : `${hostname} is a ${kind} address (${range})`;
}
