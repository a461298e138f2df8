import type { Scheduling } from '@scrapejobs/contracts';
import { cronPattern, nextRunAt } from './cron.ts';

const s = (over: Partial<Scheduling>): Scheduling => ({
  days: [],
  hours: [],
  minutes: [0],
  timezone: 'UTC',
  ...over,
});
const at = (iso: string) => new Date(iso);

describe('cronPattern', () => {
  it.each([
    [{}, '0 * * * *'],
    [{ minutes: [] }, '0 * * * *'],
    [{ minutes: [0, 30], hours: [9, 17] }, '0,30 9,17 * * *'],
    [{ days: [0], hours: [3], minutes: [15] }, '15 3 * * 0'],
    [{ days: [1, 2, 3, 4, 5], hours: [23], minutes: [59] }, '59 23 * * 1,2,3,4,5'],
  ])('maps %j to %s', (over, pattern) => {
    expect(cronPattern(s(over))).toBe(pattern);
  });

  it('reads minutes as seconds of every minute of the hours and days with SCHEDULE_UNIT=second', () => {
    expect(cronPattern(s({ days: [1], hours: [9], minutes: [5, 35] }), 'second')).toBe('5,35 * 9 * * 1');
    expect(nextRunAt(s({ minutes: [5, 35] }), at('2026-11-21T10:15:40.000Z'), 'second').toISOString()).toBe(
      '2026-11-21T10:16:05.000Z',
    );
  });
});

describe('nextRunAt', () => {
  it('defaults to every hour at minute 0', () => {
    expect(nextRunAt(s({}), at('2026-11-21T10:15:00.000Z')).toISOString()).toBe('2026-11-21T11:00:00.000Z');
  });

  it('is strictly after the given instant', () => {
    expect(nextRunAt(s({}), at('2026-11-21T11:00:00.000Z')).toISOString()).toBe('2026-11-21T12:00:00.000Z');
  });

  it('treats 0 as Sunday', () => {
    // 2026-11-21 is a Saturday.
    expect(nextRunAt(s({ days: [0], hours: [8] }), at('2026-11-21T10:00:00.000Z')).toISOString()).toBe(
      '2026-11-22T08:00:00.000Z',
    );
  });

  it('rolls over the last minute of a day to the next day', () => {
    const sched = s({ hours: [23], minutes: [59] });
    expect(nextRunAt(sched, at('2026-11-21T23:58:30.000Z')).toISOString()).toBe('2026-11-21T23:59:00.000Z');
    expect(nextRunAt(sched, at('2026-11-21T23:59:00.000Z')).toISOString()).toBe('2026-11-22T23:59:00.000Z');
    expect(nextRunAt(sched, at('2026-12-31T23:59:30.000Z')).toISOString()).toBe('2027-01-01T23:59:00.000Z');
  });

  it('follows the time zone offset', () => {
    const paris = s({ hours: [9], timezone: 'Europe/Paris' });
    // Winter: UTC+1.
    expect(nextRunAt(paris, at('2026-11-21T00:00:00.000Z')).toISOString()).toBe('2026-11-21T08:00:00.000Z');
    // Summer: UTC+2.
    expect(nextRunAt(paris, at('2026-07-01T00:00:00.000Z')).toISOString()).toBe('2026-07-01T07:00:00.000Z');
  });

  it('runs a wall-clock time that does not exist on the spring-forward day once, an hour later', () => {
    // Europe/Paris jumps from 02:00 to 03:00 on 2027-03-28; 02:30 runs at 03:30 local (01:30Z).
    const sched = s({ hours: [2], minutes: [30], timezone: 'Europe/Paris' });
    const first = nextRunAt(sched, at('2027-03-27T12:00:00.000Z'));
    expect(first.toISOString()).toBe('2027-03-28T01:30:00.000Z');
    expect(nextRunAt(sched, first).toISOString()).toBe('2027-03-29T00:30:00.000Z');
  });

  it('fires once on the fall-back day when the hour repeats', () => {
    // America/New_York repeats 01:00–02:00 on 2026-11-01: the job runs at the first 01:30 only.
    const sched = s({ hours: [1], minutes: [30], timezone: 'America/New_York' });
    const first = nextRunAt(sched, at('2026-10-31T12:00:00.000Z'));
    expect(first.toISOString()).toBe('2026-11-01T05:30:00.000Z');
    expect(nextRunAt(sched, first).toISOString()).toBe('2026-11-02T06:30:00.000Z');
  });

  it('keeps the same local time across the DST change', () => {
    const sched = s({ hours: [12], timezone: 'America/New_York' });
    expect(nextRunAt(sched, at('2026-10-31T20:00:00.000Z')).toISOString()).toBe('2026-11-01T17:00:00.000Z');
  });
});
