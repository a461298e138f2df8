import { createHash } from 'node:crypto';
import type { Mode } from '@scrapejobs/db';

export const SCOPES = ['jobs:read', 'jobs:write', 'webhooks:read', 'webhooks:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** An API key's token: `sk_test_` or `sk_live_`, then 24 to 64 letters and digits. */
export const TOKEN_FORMAT = /^sk_(live|test)_[A-Za-z0-9]{24,64}$/;

/** Who is asking: a key of a user, in the key's mode, with its scopes. */
export interface Principal {
  keyId: string;
  userId: string;
  mode: Mode;
  scopes: readonly string[];
}

/** Whose resources a call concerns: a user in one mode (docs/api.md §2, ownership). */
export type Owner = Pick<Principal, 'userId' | 'mode'>;

/** Tokens are stored only as their SHA-256. */
export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');
