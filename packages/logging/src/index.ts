import { type Logger, pino } from 'pino';

export type { Logger };

/** A structured JSON logger for one process; `base.service` names the process in every line. */
export function createLogger(service: string, level: string): Logger {
  return pino({
    level,
    base: { service },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}
