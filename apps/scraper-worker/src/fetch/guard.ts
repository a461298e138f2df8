import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { type BlockedTargetError, OutboundGuard, resolverFromLookup } from '@scrapejobs/outbound';
import { SCRAPER_ADDRESS_RULES } from './address.ts';

/** The system resolver in the shape of `dns.lookup`: what fetches use unless a test maps names. */
export const systemLookup: LookupFunction = (hostname, options, callback) =>
  dns.lookup(hostname, options, callback);

/**
 * The outbound guard of one fetch attempt or of the rendering proxy: `policy` decides (the
 * guard refuses metadata before asking it), `lookup` resolves names, and `onBlocked` hears of
 * every refusal, so the caller can report BLOCKED_TARGET however the refusal surfaced.
 */
export function scraperGuard(
  policy: (ip: string, port: number) => boolean,
  lookup: LookupFunction = systemLookup,
  onBlocked?: (error: BlockedTargetError) => void,
): OutboundGuard {
  return new OutboundGuard({
    allowPrivate: false,
    rules: SCRAPER_ADDRESS_RULES,
    isAllowedAddress: policy,
    resolve: resolverFromLookup(lookup),
    onBlocked,
  });
}
