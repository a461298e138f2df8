import type { Scheduling } from '@scrapejobs/contracts';
import { CronExpressionParser } from 'cron-parser';

const list = (values: readonly number[]) => (values.length ? values.join(',') : '*');

/** The cron line `m h * * d` of a schedule (docs/api.md §3.5): empty days or hours mean every value. */
export function cronPattern(s: Pick<Scheduling, 'days' | 'hours' | 'minutes'>): string {
  return `${list(s.minutes.length ? s.minutes : [0])} ${list(s.hours)} * * ${list(s.days)}`;
}

/** The first planned time strictly after `from`, in the schedule's time zone (DST included). */
export function nextRunAt(s: Scheduling, from: Date): Date {
  return CronExpressionParser.parse(cronPattern(s), { currentDate: from, tz: s.timezone }).next().toDate();
}
