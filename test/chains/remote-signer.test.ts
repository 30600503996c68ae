import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { parseUnits, type Address } from "viem";
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from "viem/accounts";
import { remoteSigner } from "../../chains/remote-signer.js";
import { startAnvil, type Anvil } from "../../local/anvil.js";
import { detectPayments } from "../../modules/payments/index.js";
import { settleChain } from "../../processors/settler.js";
import { chainHelpers, waitFor } from "../helpers/chain.js";
import { createTestDeps, type TestDeps } from "../helpers/deps.js";
import { authorizeSettler, startTestService, type TestService } from "../helpers/service.js";

// A settler whose key the service never holds: SIGNER_URL names a JSON-RPC signer answering eth_signTransaction. The
// signer here is an Anvil holding keys of another mnemonic (no other test signs with them); the chain is the run's 777177.
vi.setConfig({ testTimeout: 180_000 });

const MNEMONIC = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const remote = mnemonicToAccount(MNEMONIC); // what the signer holds
let signer: Anvil;
let svc: TestService;
let deps: TestDeps;

beforeAll(async () => {
  signer = await startAnvil({ chainId: 777177, mnemonic: MNEMONIC });
  svc = await startTestService({ processors: false });
  await authorizeSettler(svc.deps, remote.address);
  // The same schema as the service, with no settler key: only the remote signer.
  deps = await createTestDeps({
    env: { APP_SCHEMA: svc.deps.db.schema, SETTLER_PRIVATE_KEY: "", SIGNER_URL: signer.rpcUrl, SIGNER_ADDRESS: remote.address },
  });
});
afterAll(async () => {
  await deps?.db.close(); // the service's schema: it drops it
  await svc?.stop();
  await signer?.stop();
});

describe("settlement with SIGNER_URL and no private key", () => {
  it("signs the sweep through the remote signer; the payment completes", async () => {
    expect(deps.config.SETTLER_PRIVATE_KEY ?? "").toBe("");
    const m = await svc.newMerchant();
    const chain = deps.chains.find((c) => c.chainId === 777177)!;
    const h = chainHelpers(chain);
    const to = privateKeyToAccount(generatePrivateKey()).address;
    const res = await svc.http("POST", "/payments", {
      apiKey: m.apiKey,
      body: { merchant: to, chainId: "777177", token: h.token("USDT").address, amount: "3", gasless: true, orderId: "remote-1" },
    });
    expect(res.status).toBe(200);
    const id = res.body.url.split("/pay/")[1] as string;
    const { rows } = await deps.db.pool.query(`SELECT recipient_address FROM payments WHERE id = $1`, [id]);
    await h.pay("USDT", rows[0].recipient_address, parseUnits("3", 6));
    await waitFor(
      async () => {
        await detectPayments(deps, chain, await h.pub.getBlockNumber({ cacheTime: 0 }));
        await settleChain(deps, chain);
        const p = await deps.db.pool.query(`SELECT status FROM payments WHERE id = $1`, [id]);
        return p.rows[0].status === "completed";
      },
      { what: "the payment completed", timeout: 150_000 },
    );
    const { rows: s } = await deps.db.pool.query(`SELECT signer, tx_hash FROM settlements`);
    expect(s).toEqual([{ signer: remote.address.toLowerCase(), tx_hash: expect.stringMatching(/^0x/) }]);
    const mined = await h.pub.getTransaction({ hash: s[0].tx_hash });
    expect(mined.from.toLowerCase()).toBe(remote.address.toLowerCase());
    expect(await h.balanceOf("USDT", to)).toBe(parseUnits("3", 6) - 100_000n);
  });
});

describe("what the remote signer answers is checked", () => {
  let server: Server;
  let url = "";
  let answer: (params: any) => unknown = () => null;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let raw = "";
      req.on("data", (d) => (raw += d));
      req.on("end", async () => {
        const { id, params } = JSON.parse(raw);
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id, result: await answer(params[0]) }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server?.close(r)));

  const tx = {
    chainId: 777177,
    to: "0x000000000000000000000000000000000000dEaD" as Address,
    value: 1n,
    gas: 21_000n,
    nonce: 3,
    maxFeePerGas: 2n * 10n ** 9n,
    maxPriorityFeePerGas: 10n ** 9n,
    type: "eip1559" as const,
  };
  const other = privateKeyToAccount(generatePrivateKey());

  it("a transaction signed by another key is refused", async () => {
    answer = () => other.signTransaction(tx);
    await expect(remoteSigner({ url, address: remote.address }).signTransaction!(tx)).rejects.toThrow(/signed with 0x[0-9a-fA-F]{40}, not/);
  });

  it("a transaction other than the one asked (another recipient, fee or nonce) is refused", async () => {
    answer = () => other.signTransaction({ ...tx, maxFeePerGas: 50n * 10n ** 9n });
    await expect(remoteSigner({ url, address: other.address }).signTransaction!(tx)).rejects.toThrow(
      "remote signer signed another transaction than the one asked",
    );
  });

  it("geth and Clef's `{ raw, tx }` answer is taken, the bytes checked alike", async () => {
    answer = async () => ({ raw: await other.signTransaction(tx), tx: {} });
    expect(await remoteSigner({ url, address: other.address }).signTransaction!(tx)).toBe(await other.signTransaction(tx));
  });
});
