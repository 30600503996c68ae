import { randomUUID } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertPayments } from "../../../modules/payments/index.js";
import { newPaymentRow } from "../../helpers/payment-rows.js";
import { startTestService, type TestService } from "../../helpers/service.js";

// One merchant's GraphQL documents must not stall everybody: a document is refused by its cost over the expanded
// document (fragments, aliases), and a merchant's allowed-but-costly documents run a few at a time, so another
// merchant's REST calls, a payer's status poll and the dashboard's login page stay fast meanwhile.

let svc: TestService;
let attacker: { id: string; apiKey: string };
let victim: { id: string; apiKey: string };

beforeAll(async () => {
  svc = await startTestService({ processors: false });
  [attacker, victim] = [await svc.newMerchant(), await svc.newMerchant()];
  // Pages worth reading: 400 payments of the attacker's.
  for (let i = 0; i < 400; i += 64)
    await insertPayments(
      svc.deps.db,
      Array.from({ length: Math.min(64, 400 - i) }, () => newPaymentRow(attacker.id, {}, false)),
    );
});
afterAll(async () => {
  await svc?.stop();
});

const PAGE = `payments(limit: 100) { data { paymentId status amount receivedAmount chainId token { address symbol decimals } fees { totalFee } createdAt unexpectedFunds { token amount } } nextCursor hasMore }`;
const aliased = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}: ${PAGE}`).join("\n");
const gql = (apiKey: string, query: string) =>
  fetch(`${svc.url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey },
    body: JSON.stringify({ query }),
  });

/** The unrelated requests: another merchant's POST /payments, a payer's status poll and page, the login page. */
async function unrelated(): Promise<number[]> {
  const origin = new URL(svc.url).origin;
  const times: number[] = [];
  const timed = async (f: () => Promise<Response>, ok: number) => {
    const t0 = performance.now();
    const res = await f();
    const text = await res.text();
    times.push(performance.now() - t0);
    expect(res.status, text.slice(0, 200)).toBe(ok);
    return text;
  };
  const usdt = svc.deps.chains.find((c) => c.chainId === 777177)!.tokens.find((t) => t.symbol === "USDT")!.address;
  const created = await timed(
    () =>
      fetch(`${svc.url}/payments`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": victim.apiKey },
        body: JSON.stringify({
          merchant: privateKeyToAccount(generatePrivateKey()).address,
          chainId: "777177",
          token: usdt,
          amount: "12.5",
          orderId: `order-${randomUUID()}`,
        }),
      }),
    200,
  );
  const id = (JSON.parse(created) as { url: string }).url.split("/").pop()!;
  await timed(() => fetch(`${svc.url}/payments/${id}/status`), 200);
  await timed(() => fetch(`${origin}/pay/${id}`), 200);
  await timed(() => fetch(`${origin}/dashboard/login`), 200);
  return times;
}

describe("GraphQL work is bounded per document and per merchant", () => {
  it("the issue's document (two fragments expanding to 560 pages of 100 payments) is refused before it runs", async () => {
    const short = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}:payments(limit:100){hasMore}`).join(" ");
    const doc = `query{...A ...B} fragment A on Query{${short(280, "a")}} fragment B on Query{${short(280, "b")}}`;
    expect(Buffer.byteLength(doc)).toBeLessThan(20 * 1024);
    const t0 = performance.now();
    const res = await gql(attacker.apiKey, doc);
    const body = (await res.json()) as { errors: { message: string }[] };
    expect(res.status).toBe(400);
    expect(body.errors[0]!.message).toBe("Too many root fields: 560 exceeds the limit of 10");
    expect(performance.now() - t0).toBeLessThan(2_000);
    // Five pages is what one document may read; six is refused by cost.
    const six = await gql(attacker.apiKey, `{ ${aliased(6, "p")} }`);
    expect(six.status).toBe(400);
    expect(((await six.json()) as { errors: { message: string }[] }).errors[0]!.message).toBe(
      "Query is too costly: it would read up to 600 rows, the limit is 500",
    );
  });

  it("under a flood of the costliest allowed documents, other merchants' requests stay fast", async () => {
    // Baseline, measured in the same run without the flood.
    const quiet: number[] = [];
    for (let i = 0; i < 3; i++) quiet.push(...(await unrelated()));

    const doc = `{ ${aliased(5, "p")} }`;
    const statuses = new Map<number, number>();
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const res = await gql(attacker.apiKey, doc);
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const body = (await res.json()) as { data?: unknown; errors?: unknown[] };
        if (res.status === 200 && (!body.data || body.errors))
          throw new Error(`the flood's document failed: ${JSON.stringify(body.errors)}`);
      }
    };
    const flood = Array.from({ length: 80 }, worker);
    await new Promise((r) => setTimeout(r, 500));
    const loaded: number[] = [];
    for (let i = 0; i < 3; i++) loaded.push(...(await unrelated()));
    stop = true;
    await Promise.all(flood);

    const worst = (xs: number[]) => Math.round(Math.max(...xs));
    console.log(
      `graphql flood: attacker answers ${JSON.stringify(Object.fromEntries(statuses))}; unrelated requests worst ${worst(loaded)} ms under the flood, ${worst(quiet)} ms without`,
    );
    expect([...statuses.keys()].every((s) => s === 200 || s === 429)).toBe(true);
    expect(statuses.get(429) ?? 0).toBeGreaterThan(0); // 80 at once: beyond the 2 running and 64 waiting, refused
    expect(worst(loaded)).toBeLessThan(3_000);
  });
});
