import pg from "pg";

export type Listener = { close(): Promise<void> };

export type ListenOptions = {
  url: string;
  channels: string[];
  onNotify(channel: string, payload: string): void;
  /**
   * Runs on the listening connection after each (re)connect, then every `checkMs`: installs what
   * the notifications need (triggers) and doubles as a health check, a failure reconnects.
   */
  check?(client: pg.Client): Promise<void>;
  checkMs?: number;
  /** Called after every connect except the first: notifications may have been lost meanwhile. */
  onReconnect?(): void;
  retryMs?: number;
  log?(msg: string): void;
};

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

/**
 * LISTEN on a dedicated connection (a pooled one would be handed to others and lose its LISTENs).
 * Reconnects and re-LISTENs after any error; a notification is only a hint to look now, so
 * whoever listens must still catch up on its own (a poll) for what arrives while it is reconnecting.
 */
export function listen(opts: ListenOptions): Listener {
  const retryMs = opts.retryMs ?? 1000;
  const log = opts.log ?? (() => {});
  let closed = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let connects = 0;

  const schedule = (fn: () => void, ms: number) => {
    if (timer) clearTimeout(timer);
    timer = closed ? null : setTimeout(fn, ms);
  };

  const drop = (c: pg.Client, why: unknown) => {
    if (client !== c) return;
    client = null;
    if (!closed) log(`listen: connection lost (${(why as Error)?.message ?? why}), reconnecting`);
    c.removeAllListeners("notification");
    c.on("error", () => {});
    c.end().catch(() => {});
    schedule(connect, retryMs);
  };

  const check = async (c: pg.Client) => {
    if (client !== c || closed) return;
    try {
      await opts.check?.(c);
    } catch (e) {
      // A broken connection fails here; a failed install is logged and retried next time.
      if (!isConnectionError(e)) log(`listen: check failed: ${(e as Error).message}`);
      else return drop(c, e);
    }
    if (client !== c || closed) return; // dropped meanwhile: the reconnect owns the timer
    if (opts.check) schedule(() => void check(c), opts.checkMs ?? 5000);
  };

  const connect = async () => {
    if (closed) return;
    const c = new pg.Client({ connectionString: opts.url, keepAlive: true, application_name: "listen" });
    c.on("error", (e) => drop(c, e));
    c.on("end", () => drop(c, "connection ended"));
    c.on("notification", (n) => opts.onNotify(n.channel, n.payload ?? ""));
    client = c;
    try {
      await c.connect();
      for (const ch of opts.channels) await c.query(`LISTEN ${quoteIdent(ch)}`);
    } catch (e) {
      return drop(c, e);
    }
    if (closed) return void c.end().catch(() => {});
    if (connects++ > 0) opts.onReconnect?.();
    await check(c);
  };

  void connect();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}

/** Errors of the connection itself (as opposed to a statement failing on a healthy one). */
function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  if (!code) return true; // socket errors, "Connection terminated", "Client was closed"
  return code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03";
}
