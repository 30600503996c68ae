import { afterAll, beforeAll, expect } from "vitest";
import { parseEther, type Address, type Hex } from "viem";
import { deBridgeGateStandInAbi, deBridgeGateStandInBytecode } from "../../../abis/DeBridgeGateStandIn.js";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import type { AppDeps } from "../../../core/deps.js";
import type { PaymentRow } from "../../../modules/payments/index.js";
import { chainHelpers } from "../../helpers/chain.js";
import { startTestService, type TestService } from "../../helpers/service.js";
import { startDlnFake, type DlnFake } from "./dln-fake.js";

/** The destination chain of these tests' payments. */
export const DST = 777177;

/** deBridge's messaging fee of the scene's gate (DLN's on Ethereum, Base, Arbitrum), and what cancel-tx adds for keepers. */
export const MESSAGING_FEE = parseEther("0.001");
export const EXECUTION_FEE = parseEther("0.0001");

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
    await placeCancelTarget();
  });

  /**
   * Where the fake's cancels go: an account answering every call with the address of a DeBridgeGate stand-in that
   * charges MESSAGING_FEE (so the service reads the fee as from DLN's DlnDestination.deBridgeGate(), and the cancel
   * itself just succeeds, however often a test sends it). Operators' BRIDGE_DESTINATION_ADDRESS is `withDestination`.
   */
  async function placeCancelTarget() {
    const chain = h();
    const owner = await chain.newPayer();
    const wallet = chain.walletOf(owner);
    const deployed = await chain.wait(
      await wallet.deployContract({
        abi: deBridgeGateStandInAbi,
        bytecode: deBridgeGateStandInBytecode,
        args: [owner.address, MESSAGING_FEE, 0],
      }),
    );
    const gate = deployed.contractAddress!;
    await chain.wait(
      await wallet.writeContract({
        address: gate,
        abi: deBridgeGateStandInAbi,
        functionName: "updateChainSupport",
        args: [
          [137n, 7565164n],
          [
            { fixedNativeFee: 0n, isSupported: true, transferFeeBps: 0 },
            { fixedNativeFee: 0n, isSupported: true, transferFeeBps: 0 },
          ],
        ],
      }),
    );
    // PUSH20 gate, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN: returns the gate (left-padded) to any call.
    const code = `0x73${gate.slice(2)}60005260206000f3` as Hex;
    await chain.pub.request({ method: "anvil_setCode" as never, params: [fake.cancelTo, code] as never });
    fake.cancelValue = MESSAGING_FEE + EXECUTION_FEE;
    fake.executionFee = EXECUTION_FEE;
  }
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
