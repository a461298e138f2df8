import type { Database } from '@scrapejobs/db';
import type { Owner } from '../principal.ts';

/** An account's pages this UTC month, counted as runs store them (runs that expire keep their count). */
export interface MonthUsage {
  pages: number;
  monthStart: Date;
  monthEnd: Date;
  /** When its last page was stored this month; null without one. */
  lastPageAt: Date | null;
}

/** The URLs of the owner's running runs: claimed by a worker (active), and waiting to be. */
export interface QueueUsage {
  active: number;
  waiting: number;
}

/** Pages scraped and work in flight per account, as Firecrawl's /team endpoints report them (docs/api.md §18). */
export class UsageService {
  readonly #db: Database;
  readonly #now: () => Date;

  constructor(db: Database, now: () => Date = () => new Date()) {
    this.#db = db;
    this.#now = now;
  }

  /** The account's pages this UTC month, every job and key mode together. */
  async month(userId: string): Promise<MonthUsage> {
    const now = this.#now();
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const row = await this.#db.accountUsage.findUnique({
      where: { userId_month: { userId, month: monthStart } },
    });
    return { pages: Number(row?.pages ?? 0), monthStart, monthEnd, lastPageAt: row?.lastPageAt ?? null };
  }

  /**
   * Counts `pages` more of the account's pages this UTC month, as a run's stored pages are
   * counted (a parsed file is one: docs/api.md §18).
   */
  async count(userId: string, pages = 1): Promise<void> {
    await this.#db.$executeRaw`
      INSERT INTO account_usage AS a (user_id, month, pages, last_page_at)
      VALUES (${userId}, date_trunc('month', now() AT TIME ZONE 'UTC')::date, ${pages}, now() AT TIME ZONE 'UTC')
      ON CONFLICT (user_id, month)
      DO UPDATE SET pages = a.pages + excluded.pages, last_page_at = excluded.last_page_at`;
  }

  /** The URLs of the owner's running runs (its key mode's), claimed and waiting. */
  async queue(owner: Owner): Promise<QueueUsage> {
    const sums = await this.#db.run.aggregate({
      where: { status: 'running', job: { userId: owner.userId, mode: owner.mode } },
      _sum: { activeUrls: true, pendingUrls: true },
    });
    return { active: sums._sum.activeUrls ?? 0, waiting: sums._sum.pendingUrls ?? 0 };
  }
}
