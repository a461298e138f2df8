import { type Scheduling, schedulingSchema } from '@scrapejobs/contracts';
import { type Database, Prisma } from '@scrapejobs/db';
import type { Payload } from '@scrapejobs/queues';
import type { Queue } from 'bullmq';
import { cronPattern, type ScheduleUnit } from './cron.ts';

/** Arms and disarms the schedule of a job; the jobs service calls it inside its transactions. */
export interface Scheduler {
  arm(jobId: string, scheduling: Scheduling): Promise<void>;
  disarm(jobId: string): Promise<void>;
}

type TickQueue = Queue<Payload<'scheduleTicks'>, unknown, string>;

/** One BullMQ job scheduler per job, keyed by the job id, so no process can duplicate it. */
export class QueueScheduler implements Scheduler {
  readonly #queue: TickQueue;
  readonly #unit: ScheduleUnit;
  constructor(queue: TickQueue, unit: ScheduleUnit = 'minute') {
    this.#queue = queue;
    this.#unit = unit;
  }

  async arm(jobId: string, scheduling: Scheduling): Promise<void> {
    await this.#queue.upsertJobScheduler(
      jobId,
      { pattern: cronPattern(scheduling, this.#unit), tz: scheduling.timezone },
      { name: 'tick', data: { jobId } },
    );
  }

  async disarm(jobId: string): Promise<void> {
    await this.#queue.removeJobScheduler(jobId);
  }

  /**
   * Makes Redis agree with PostgreSQL: a job that should have a schedule gets it back (with
   * its current pattern), and a scheduler whose job is gone, paused or unscheduled is removed.
   */
  async reconcile(db: Database): Promise<{ armed: string[]; removed: string[] }> {
    const jobs = await db.job.findMany({
      where: { scheduling: { not: Prisma.DbNull }, status: { not: 'paused' } },
      select: { id: true, scheduling: true },
    });
    const wanted = new Map(jobs.map((j) => [j.id, schedulingSchema.parse(j.scheduling)]));
    const existing = await this.#queue.getJobSchedulers(0, -1);
    const armed: string[] = [];
    const removed: string[] = [];
    for (const s of existing) {
      const schedule = wanted.get(s.key);
      if (!schedule) {
        await this.disarm(s.key);
        removed.push(s.key);
      } else if (s.pattern === cronPattern(schedule, this.#unit) && (s.tz ?? 'UTC') === schedule.timezone) {
        wanted.delete(s.key);
      }
    }
    for (const [jobId, schedule] of wanted) {
      await this.arm(jobId, schedule);
      armed.push(jobId);
    }
    return { armed, removed };
  }
}
