export type { ConsoleDeps, ConsoleServices } from './deps.ts';
export { consoleRouter } from './router.ts';
