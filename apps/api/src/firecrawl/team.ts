import type { Principal, UsageService } from '@scrapejobs/domain';
import { creditUsageBody, type FirecrawlVersion, queueStatusBody } from '@scrapejobs/firecrawl';

/** What the /team endpoints read. */
export interface TeamDeps {
  usage: UsageService;
  /** ACCOUNT_MONTHLY_CREDITS; null: no quota. */
  monthlyCredits: number | null;
  /** MAX_RUNNING_URLS_PER_USER: the account's URLs in flight at most. */
  maxRunningUrls: number;
}

/** `mostRecentSuccess` covers the last day, as Firecrawl's does. */
const RECENT_MS = 24 * 3600 * 1000;

type TeamHandler = (principal: Principal, version: FirecrawlVersion) => Promise<unknown>;

/** GET /team/credit-usage and /team/queue-status (docs/api.md §18): honest figures of this account. */
export function teamRoutes(deps: TeamDeps): [path: string, handler: TeamHandler][] {
  return [
    [
      '/team/credit-usage',
      async (principal, version) => {
        const month = await deps.usage.month(principal.userId);
        return creditUsageBody(version, {
          used: month.pages,
          quota: deps.monthlyCredits,
          periodStart: month.monthStart,
          periodEnd: month.monthEnd,
        });
      },
    ],
    [
      '/team/queue-status',
      async (principal) => {
        const [queue, month] = await Promise.all([
          deps.usage.queue(principal),
          deps.usage.month(principal.userId),
        ]);
        const last = month.lastPageAt;
        return queueStatusBody({
          ...queue,
          maxConcurrency: deps.maxRunningUrls,
          mostRecentSuccess: last && Date.now() - last.getTime() <= RECENT_MS ? last : null,
        });
      },
    ],
  ];
}
