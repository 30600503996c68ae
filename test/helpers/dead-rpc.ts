import net from "node:net";
import type { AddressInfo } from "node:net";

/**
 * A chain RPC endpoint that is down: a TCP server on 127.0.0.1 (a free port) that accepts every connection and
 * closes it at once, as a crashed node behind a live address would. Every JSON-RPC call made to `url` fails with a
 * real socket error (no client is mocked); `connections` counts the attempts, so a test can show the RPC was asked.
 * A port of its own, held until `close`, so no other process can start answering on it.
 *
 *   const rpc = await startDeadRpc();
 *   const deps = await createTestDeps({ env: { RPC_URL_137: rpc.url } });
 */
export async function startDeadRpc() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
export type DeadRpc = Awaited<ReturnType<typeof startDeadRpc>>;
