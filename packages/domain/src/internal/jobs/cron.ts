import type { Scheduling } from '@scrapejobs/contracts';
import { CronExpressionParser } from 'cron-parser';

const list = (values: readonly number[]) => (values.length ? values.join(',') : '*');

/**
 * What a schedule's `minutes` count (SCHEDULE_UNIT): `minute`, always in production; `second` reads
 * them as the seconds of every minute of its hours and days, so that a test of the fleet's ticks
 * waits seconds, not minutes, between planned times.
 */
export type ScheduleUnit = 'minute' | 'second';

/**
 * The cron line `m h * * d` of a schedule (docs/api.md §3.5): empty days or hours mean every value.
 * In seconds, `s * h * * d`.
 */
export function cronPattern(
  s: Pick<Scheduling, 'days' | 'hours' | 'minutes'>,
  unit: ScheduleUnit = 'minute',
): string {
  const minutes = list(s.minutes.length ? s.minutes : [0]);
  const rest = `${list(s.hours)} * * ${list(s.days)}`;
  return unit === 'second' ? `${minutes} * ${rest}` : `${minutes} ${rest}`;
}

/** The first planned time strictly after `from`, in the schedule's time zone (DST included). */
export function nextRunAt(s: Scheduling, from: Date, unit: ScheduleUnit = 'minute'): Date {
  return CronExpressionParser.parse(cronPattern(s, unit), { currentDate: from, tz: s.timezone })
    .next()
    .toDate();
}
