import type { FirecrawlVersion } from './types.ts';

/** What Firecrawl's self-hosted edition reports as a team's plan and remaining credits: no quota. */
export const SELF_HOSTED_CREDITS = 99_999_999;

/** The figures of /team/credit-usage: credits are pages scraped. */
export interface CreditFigures {
  /** Pages the account scraped this billing period (the UTC month). */
  used: number;
  /** The operator's monthly quota per account; null: none. */
  quota: number | null;
  periodStart: Date;
  periodEnd: Date;
}

/**
 * The body of GET /team/credit-usage: v2's camelCase, v1's snake_case. Without a quota, plan and
 * remaining credits are what Firecrawl's self-hosted edition reports; `creditsUsed` is always the count.
 */
export function creditUsageBody(version: FirecrawlVersion, figures: CreditFigures) {
  const plan = figures.quota ?? SELF_HOSTED_CREDITS;
  const remaining = figures.quota === null ? SELF_HOSTED_CREDITS : Math.max(0, figures.quota - figures.used);
  const start = figures.periodStart.toISOString();
  const end = figures.periodEnd.toISOString();
  const data =
    version === 'v1'
      ? {
          remaining_credits: remaining,
          plan_credits: plan,
          credits_used: figures.used,
          billing_period_start: start,
          billing_period_end: end,
        }
      : {
          remainingCredits: remaining,
          planCredits: plan,
          creditsUsed: figures.used,
          billingPeriodStart: start,
          billingPeriodEnd: end,
        };
  return { success: true as const, data };
}

/** The figures of /team/queue-status: the URLs of the account's running work. */
export interface QueueFigures {
  active: number;
  waiting: number;
  maxConcurrency: number;
  /** When the account's last page was stored, if within the last day. */
  mostRecentSuccess: Date | null;
}

/** The body of GET /team/queue-status (both versions have the same shape). */
export function queueStatusBody(figures: QueueFigures) {
  return {
    success: true as const,
    jobsInQueue: figures.active + figures.waiting,
    activeJobsInQueue: figures.active,
    waitingJobsInQueue: figures.waiting,
    maxConcurrency: figures.maxConcurrency,
    mostRecentSuccess: figures.mostRecentSuccess?.toISOString() ?? null,
  };
}
