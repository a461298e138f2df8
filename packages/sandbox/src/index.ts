export {
  SandboxError,
  type SandboxLimit,
  SandboxPool,
  type SandboxPoolOptions,
  TaskError,
} from './internal/pool.ts';
export {
  ProcessStopped,
  type ProcessTaskOptions,
  runInProcess,
  serveProcessTask,
} from './internal/process.ts';
export { serveTasks } from './internal/thread.ts';
