/** The demo merchant's logs: one JSON line per event on stdout. It never logs keys or signatures. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface DemoLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export function demoLogger(level: LogLevel, base: Record<string, unknown> = {}): DemoLogger {
  const write = (l: Exclude<LogLevel, 'silent'>, msg: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[l] < ORDER[level]) return;
    const error = fields.error instanceof Error ? { error: { name: fields.error.name, message: fields.error.message } } : {};
    process.stdout.write(JSON.stringify({ time: new Date().toISOString(), level: l, msg, ...base, ...fields, ...error }) + '\n');
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}
