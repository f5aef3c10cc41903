/** What the plug-ins log through: any logger with these two methods (console, pino, the server's own). */
export interface ClientLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: ClientLogger = { info() {}, warn() {} };

/** Tags every line with the component that wrote it. */
export function componentLogger(logger: ClientLogger, component: string): ClientLogger {
  return {
    info: (msg, fields) => logger.info(msg, { component, ...fields }),
    warn: (msg, fields) => logger.warn(msg, { component, ...fields }),
  };
}
