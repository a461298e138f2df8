import { type AddressRules, OutboundGuard } from '@scrapejobs/outbound';

/**
 * Decides whether the worker may connect to an IP address. The port matters only to test hooks;
 * callers that decide by address alone leave it out.
 */
export type AddressPolicy = (ip: string, port?: number) => boolean;

/**
 * The scraper's address rules: those of @scrapejobs/outbound, with all of IPv4 link-local
 * counted as metadata (cloud providers keep several services there, and a job's URLs are
 * whatever its owner names).
 */
export const SCRAPER_ADDRESS_RULES: AddressRules = { linkLocalIsMetadata: true };

/**
 * The production policy (docs/api.md §7): public addresses always, private ones only when allowed,
 * metadata and strings that are not addresses never. A test `hook` decides instead of the
 * private-range rule (so a test can allow one loopback port and forbid another).
 */
export function addressPolicy(
  allowPrivate: boolean,
  hook?: (ip: string, port: number) => boolean,
): AddressPolicy {
  const guard = new OutboundGuard({ allowPrivate, rules: SCRAPER_ADDRESS_RULES, isAllowedAddress: hook });
  return (ip, port = 0) => guard.allows(ip, port);
}
