import { BlockedTargetError } from './blocked.ts';
import { fixedAddress, OutboundGuard, type Resolve, systemResolve } from './guard.ts';

export type TargetCheck = { ok: true } | { ok: false; reason: string };

/**
 * The one answer for a host name that is refused, whatever the reason (it resolves to a blocked
 * address, to none, or not in time): telling them apart would let a client map internal DNS.
 */
const UNREACHABLE_HOST = 'must be a publicly reachable host';

/**
 * Validates a URL's host at configuration time (a webhook being created): IP literals (and
 * localhost) are refused by their class, which the client wrote itself; names are resolved and
 * every address must be allowed, and a refused name gets UNREACHABLE_HOST, never its addresses.
 */
export async function checkUrlTarget(
  url: string,
  allowPrivate: boolean,
  resolve: Resolve = systemResolve,
  timeoutMs = 5_000,
): Promise<TargetCheck> {
  if (!URL.canParse(url)) return { ok: false, reason: 'is not a valid URL' };
  const target = new URL(url);
  const port = Number(target.port) || (target.protocol === 'https:' ? 443 : 80);
  const guard = new OutboundGuard({ allowPrivate, resolve });
  try {
    guard.checkHost(target.hostname, port);
  } catch (err) {
    if (err instanceof BlockedTargetError)
      return { ok: false, reason: `must not target a ${err.kind} address` };
    throw err;
  }
  if (fixedAddress(target.hostname) !== null) return { ok: true };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((done) => {
    timer = setTimeout(() => done(false), timeoutMs);
  });
  const resolved = await Promise.race([guard.resolve(target.hostname, port).then(() => true), timeout])
    .catch(() => false)
    .finally(() => clearTimeout(timer));
  return resolved ? { ok: true } : { ok: false, reason: UNREACHABLE_HOST };
}
