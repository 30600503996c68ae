import { pino, type DestinationStream, type Logger } from "pino";
import pretty from "pino-pretty";

export type { Logger };

// Structured logs: one JSON object a line on stdout (pino), with the fields that tie a line to its request
// (`reqId`), payment (`paymentId`) and chain (`chainId`). Settings (docs/observability.md):
//   LOG_LEVEL   fatal | error | warn | info | debug | trace | silent; default info (warn under NODE_ENV=test,
//               so test runs print failures, not every request)
//   LOG_PRETTY  1/true: human-readable lines (pino-pretty); default on when NODE_ENV is development or unset
//               (`npm start`), off otherwise (`npm run serve` sets production).

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type LogSettings = { level: LogLevel; pretty: boolean };

const yes = (v: string | undefined) => v === "1" || v === "true";

/** The logger's settings from the environment. An unknown LOG_LEVEL is refused at start, never silently ignored. */
export function logSettings(env: Record<string, string | undefined> = process.env): LogSettings {
  const nodeEnv = env.NODE_ENV ?? "development";
  const level = env.LOG_LEVEL || (nodeEnv === "test" ? "warn" : "info");
  if (!(LOG_LEVELS as readonly string[]).includes(level)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
  const pretty = env.LOG_PRETTY !== undefined && env.LOG_PRETTY !== "" ? yes(env.LOG_PRETTY) : nodeEnv === "development";
  return { level: level as LogLevel, pretty };
}

/**
 * A logger with these settings, writing to `destination` (default: stdout, asynchronously, flushed on exit).
 * Tests pass a stream of their own to read the lines.
 */
export function createLogger(settings: Partial<LogSettings> = {}, destination?: DestinationStream): Logger {
  const options = {
    level: settings.level ?? "info",
    timestamp: pino.stdTimeFunctions.isoTime,
    // The level by name ("level":"error"), which log stores read without pino's number table.
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const out = destination ?? (settings.pretty ? prettyStream() : undefined);
  return out ? pino(options, out) : pino(options);
}

/** Development lines: `12:00:01.123 INFO [api] request {"reqId":…}`, written synchronously in this process. */
const prettyStream = () =>
  pretty({
    sync: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    // A summary line says it all in its message; its fields are for JSON readers (api/middleware/request-summary.ts).
    ignore: "pid,hostname,component,requestSummary",
    messageFormat: "{if component}[{component}] {end}{msg}",
  });

let root: Logger | undefined;
const children = new Map<string, Logger>();

/**
 * The process's logger (or its child for `component`), made from the environment on first use: an entry point
 * may set NODE_ENV or LOG_* before anything logs.
 */
export function logger(component?: string): Logger {
  root ??= createLogger(logSettings());
  if (!component) return root;
  let child = children.get(component);
  if (!child) children.set(component, (child = root.child({ component })));
  return child;
}

/** First line of an error's message: RPC errors carry pages of request details after it. */
export const firstLine = (e: unknown) => String((e as Error)?.message ?? e).split("\n")[0]!;
