export {
  SandboxError,
  type SandboxLimit,
  SandboxPool,
  type SandboxPoolOptions,
  TaskError,
} from './internal/pool.ts';
export { serveTasks } from './internal/thread.ts';
