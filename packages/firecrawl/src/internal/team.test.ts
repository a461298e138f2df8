import { creditUsageBody, queueStatusBody, SELF_HOSTED_CREDITS } from './team.ts';

const period = { periodStart: new Date('2026-11-01T00:00:00Z'), periodEnd: new Date('2026-12-01T00:00:00Z') };

describe('creditUsageBody', () => {
  it("gives v2 the quota's rest in camelCase, never below zero", () => {
    expect(creditUsageBody('v2', { used: 40, quota: 100, ...period })).toEqual({
      success: true,
      data: {
        remainingCredits: 60,
        planCredits: 100,
        creditsUsed: 40,
        billingPeriodStart: '2026-11-01T00:00:00.000Z',
        billingPeriodEnd: '2026-12-01T00:00:00.000Z',
      },
    });
    expect(creditUsageBody('v2', { used: 140, quota: 100, ...period }).data).toMatchObject({
      remainingCredits: 0,
    });
  });

  it("answers v1 in snake_case, and without a quota as Firecrawl's self-hosted edition does", () => {
    expect(creditUsageBody('v1', { used: 7, quota: null, ...period }).data).toEqual({
      remaining_credits: SELF_HOSTED_CREDITS,
      plan_credits: SELF_HOSTED_CREDITS,
      credits_used: 7,
      billing_period_start: '2026-11-01T00:00:00.000Z',
      billing_period_end: '2026-12-01T00:00:00.000Z',
    });
  });
});

describe('queueStatusBody', () => {
  it('counts claimed and waiting URLs as jobs in queue', () => {
    const at = new Date('2026-11-29T07:00:00Z');
    expect(queueStatusBody({ active: 3, waiting: 5, maxConcurrency: 64, mostRecentSuccess: at })).toEqual({
      success: true,
      jobsInQueue: 8,
      activeJobsInQueue: 3,
      waitingJobsInQueue: 5,
      maxConcurrency: 64,
      mostRecentSuccess: '2026-11-29T07:00:00.000Z',
    });
  });
});
