// One structured logger for the process: JSON lines on stdout.
import pino from 'pino';

export const log = pino({
  level: process.env.LOG_LEVEL ?? 'info',
  base: { pid: process.pid },
  redact: { paths: ['authorization', 'password', '*.authorization', '*.password'], censor: '[redacted]' },
});

export type Logger = typeof log;
