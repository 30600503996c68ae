import net from "node:net";

export type RpcProxy = {
  port: number;
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Closes the listening socket and every open connection (callers get ECONNREFUSED), then listens again after `ms`. */
  refuse(ms: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * A TCP proxy in front of a chain's RPC: every service process reaches Anvil through it, so an outage is
 * real refused connections (not an HTTP error), while the payers talk to Anvil directly.
 */
export async function startRpcProxy(target: { host: string; port: number }, listenPort = 0): Promise<RpcProxy> {
  const open = new Set<net.Socket>();
  let accepted = 0;
  let closed = false;
  const handle = (client: net.Socket) => {
    accepted++;
    const upstream = net.connect(target.port, target.host);
    open.add(client);
    open.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    client.pipe(upstream);
    upstream.pipe(client);
  };
  let server = net.createServer(handle);
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  const port = await listen(listenPort);
  const shut = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      for (const s of open) s.destroy();
      open.clear();
    });
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    async refuse(ms) {
      await shut();
      await new Promise((r) => setTimeout(r, ms));
      if (closed) return;
      server = net.createServer(handle);
      // The port was ours a moment ago; retry briefly should another bind race us.
      for (let i = 0; ; i++) {
        try {
          await listen(port);
          return;
        } catch (e) {
          if (i >= 50) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
    async close() {
      closed = true;
      await shut();
    },
  };
}
