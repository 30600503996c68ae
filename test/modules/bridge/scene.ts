import { afterAll, beforeAll, expect } from "vitest";
import type { Address } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { AppDeps } from "../../../core/deps.js";
import type { PaymentRow } from "../../../modules/payments/index.js";
import { chainHelpers } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startDlnFake, type DlnFake } from "./dln-fake.js";

/** The destination chain of these tests' payments. */
export const DST = 777177;

/**
 * The payment side of cross-chain payments on the real stack with a scripted DLN server as the provider: one test
 * service (no processors; no status request budget in the way of a test's passes) and one merchant per file, and
 * what the tests do with them. Registers its own beforeAll/afterAll; `get()` gives the started parts.
 *
 *   const scene = bridgeScene("Bridge shop");
 *   const { placeOrder } = scene;
 *   const { orderId } = await placeOrder(await scene.newPayment());
 */
export function bridgeScene(shopName: string) {
  let fake: DlnFake;
  let svc: TestService;
  let shop: { id: string; apiKey: string };
  beforeAll(async () => {
    fake = await startDlnFake();
    // No request budget in the way of a test's passes and quotes (provider-budget.test.ts tests the quotes' own).
    svc = await startTestService({
      processors: false,
      env: { BRIDGE_API_URL: fake.url, BRIDGE_STATUS_REQUESTS_PER_MINUTE: "60000", BRIDGE_PROVIDER_REQUESTS_PER_MINUTE: "60000" },
    });
    shop = await svc.newMerchant({ name: shopName });
  });
  afterAll(async () => {
    await svc?.stop();
    await fake?.close();
  });

  const h = () => chainHelpers(svc.deps.chains.find((c) => c.chainId === DST)!);
  const usdc137 = () => svc.deps.chains.find((c) => c.chainId === 137)!.tokens.find((t) => t.symbol === "USDC")!.address;
  const usdt = () => h().token("USDT").address;
  const quote = (paymentId: string, q: string) => svc.http("GET", `/payments/${paymentId}/bridge/quote?${q}`);
  const report = (paymentId: string, txHash: string) => svc.http("POST", `/payments/${paymentId}/bridge/orders`, { body: { txHash } });
  const randomHash = () => `0x${Buffer.from(generatePrivateKey().slice(2), "hex").toString("hex")}`;

  return {
    get: () => ({ fake, svc, shop }),
    h,
    usdc137,
    usdt,
    quote,
    report,
    randomHash,
    /** A USDT payment on DST (10 by default) for a fresh merchant address; its id. */
    async newPayment(opts: { amount?: string; expiresInMs?: number } = {}): Promise<string> {
      const body: Record<string, unknown> = {
        merchant: privateKeyToAccount(generatePrivateKey()).address,
        chainId: String(DST),
        token: usdt(),
        amount: opts.amount ?? "10",
        orderId: `B-${Math.random()}`,
      };
      if (opts.expiresInMs) body.expiresAt = svc.clock.now() + opts.expiresInMs;
      const r = await svc.http("POST", "/payments", { apiKey: shop.apiKey, body });
      expect(r.status).toBe(200);
      return (r.body.url as string).split("/pay/")[1]!;
    },
    row: async (id: string) => (await svc.deps.db.pool.query<PaymentRow>(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0]!,
    order: async (id: string) => (await svc.deps.db.pool.query(`SELECT * FROM bridge_orders WHERE id = $1`, [id])).rows[0],
    events: async (id: string) =>
      (await svc.deps.db.pool.query(`SELECT from_status, to_status, reason FROM bridge_order_events WHERE order_id = $1 ORDER BY id`, [id]))
        .rows,
    /** A quote with the payer's address, and the payer's transaction reported: the order is `created`. */
    async placeOrder(paymentId: string) {
      const payer = privateKeyToAccount(generatePrivateKey()).address;
      const q = await quote(paymentId, `srcChainId=137&srcToken=${usdc137()}&payer=${payer}`);
      expect(q.status).toBe(200);
      const orderId = q.body.orderId as string;
      const txHash = randomHash();
      fake.txOrders.set(txHash, [orderId]);
      fake.setStatus(orderId, "Created");
      const r = await report(paymentId, txHash);
      expect(r.status).toBe(200);
      return { orderId, payer, txHash, report: r.body };
    },
    /** The service's deps with DST's bridge contract set as an operator would (BRIDGE_DESTINATION_ADDRESS_777177). */
    withDestination(destination: string | undefined, config: Partial<AppDeps["config"]> = {}): AppDeps {
      const chains = svc.deps.chains.map((c) => (c.chainId === DST ? { ...c, bridgeDestination: destination as Address | undefined } : c));
      return { ...svc.deps, chains, config: { ...svc.deps.config, ...config } };
    },
  };
}
