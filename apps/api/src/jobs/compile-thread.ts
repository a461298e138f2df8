// A thread that compiles job queries, so that an expensive one never holds up the API's event loop.
import { compileQuery } from '@scrapejobs/extraction';
import { serveTasks } from '@scrapejobs/sandbox';
import type { CompileTask } from './query-compiler.ts';

serveTasks((task: CompileTask) => compileQuery(task.type, task.query, { timeLimitMs: task.timeLimitMs }));
