// An extraction thread of the worker's pool, terminated past its time or heap limit.
import { workerData } from 'node:worker_threads';
import { serveTasks } from '@scrapejobs/sandbox';
import type { ThreadSettings, ThreadTask, ThreadValue } from './extractor.ts';
import { taskRunner, transferOf } from './tasks.ts';

const { timeLimitMs } = workerData as ThreadSettings;

serveTasks<ThreadTask, ThreadValue>(taskRunner(timeLimitMs), transferOf);
