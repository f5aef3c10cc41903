/** What the plug-ins log through: any logger with these methods (console, pino, the server's own); without `error`, errors go to `warn`. */
export interface ClientLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error?(msg: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: ClientLogger = { info() {}, warn() {}, error() {} };

/** Tags every line with the component that wrote it. */
export function componentLogger(logger: ClientLogger, component: string): Required<ClientLogger> {
  return {
    info: (msg, fields) => logger.info(msg, { component, ...fields }),
    warn: (msg, fields) => logger.warn(msg, { component, ...fields }),
    error: (msg, fields) => (logger.error ? logger.error(msg, { component, ...fields }) : logger.warn(msg, { component, ...fields })),
  };
}
