import { addressPolicy } from '../fetch/address.ts';

/** Decides whether the renderer may open a connection to an address and port. */
export type TargetPolicy = (ip: string, port: number) => boolean;

/**
 * docs/api.md §7, the same policy as fetching: public addresses always, loopback and private
 * ranges only with `allowPrivate`, metadata addresses never. A test hook, when given, replaces the
 * first two rules (so a test can allow one loopback port and forbid another); metadata stays blocked.
 */
export const targetPolicy: (allowPrivate: boolean, hook?: TargetPolicy) => TargetPolicy = addressPolicy;
