import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { PAYMENT_EVENTS } from "../../modules/webhooks/index.js";
import { chainHelpers } from "./chain.js";
import type { TestService } from "./service.js";

export type Shop = { id: string; apiKey: string };

/**
 * What a payments test on one chain keeps needing: a merchant of its own subscribed to every payment event (the
 * URL delivers nowhere: tests read the outbox), payments created over HTTP in `symbol` by default, rows read back.
 * `svc` is a getter: the service is started in the file's beforeAll.
 */
export function paymentKit(svc: () => TestService, chainId: number, symbol = "USDT") {
  const chain = () => svc().deps.chains.find((c) => c.chainId === chainId)!;
  return {
    async shop(name: string): Promise<Shop> {
      const m = await svc().newMerchant({ name });
      const res = await svc().http("PUT", "/v1/webhooks", {
        apiKey: m.apiKey,
        body: { url: "https://127.0.0.1:9/hooks", events: [...PAYMENT_EVENTS] },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return m;
    },
    /** POST /payments (200 expected); the payment's id. */
    async create(m: Shop, body: Record<string, unknown>): Promise<string> {
      const res = await svc().http("POST", "/payments", {
        apiKey: m.apiKey,
        body: { orderId: `order-${randomUUID()}`, chainId: String(chainId), token: chainHelpers(chain()).token(symbol).address, ...body },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.url as string).split("/pay/")[1]!;
    },
    /** The payment's row as stored (untyped, as tests read any column of it). */
    async row(id: string): Promise<Record<string, any>> {
      return (await svc().deps.db.pool.query(`SELECT * FROM payments WHERE id = $1`, [id])).rows[0];
    },
  };
}
