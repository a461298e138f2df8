import { type AddressRules, isAllowedAddress } from '@scrapejobs/outbound';

/** Decides whether the worker may open a connection to an IP address. */
export type AddressPolicy = (ip: string) => boolean;

/**
 * The scraper's address rules: those of @scrapejobs/outbound, with all of IPv4 link-local
 * counted as metadata (cloud providers keep several services there, and a job's URLs are
 * whatever its owner names).
 */
export const SCRAPER_ADDRESS_RULES: AddressRules = { linkLocalIsMetadata: true };

/**
 * The production policy (contract 7): public addresses always, private ones only when allowed,
 * metadata and strings that are not addresses never.
 */
export function addressPolicy(allowPrivate: boolean): AddressPolicy {
  return (ip) => isAllowedAddress(ip, allowPrivate, SCRAPER_ADDRESS_RULES);
}
