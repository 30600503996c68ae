import { Hono } from "hono";
import { hasPromotion, promoStatus, PROMO_FREE_TRANSACTIONS } from "../../../modules/payments/index.js";
import type { DashEnv } from "../env.js";
import { screen } from "../layout.js";

// /dashboard/promotion: what GET /promo-status answers (the same module function), plainly, with the rules.

const ACTIVE = "/dashboard/promotion";

export const promotionScreen = new Hono<DashEnv>().get("/promotion", async (c) => {
  const merchant = c.var.merchant;
  const s = await promoStatus(c.var.deps.db.pool, merchant);
  return screen(
    c,
    { title: "Promotion", active: ACTIVE },
    <>
      <section class="card">
        <h2>Free transactions</h2>
        <dl class="facts" data-testid="promo-status">
          <dt>Eligible</dt>
          <dd>
            <span class={`badge ${s.eligible ? "active" : "expired"}`} data-testid="promo-eligible">
              {s.eligible ? "yes" : "no"}
            </span>
          </dd>
          <dt>Used</dt>
          <dd data-testid="promo-used">{s.used}</dd>
          <dt>Remaining</dt>
          <dd data-testid="promo-remaining">{s.remaining}</dd>
        </dl>
        {!hasPromotion(merchant) ? (
          <p class="muted">Your plan (Member) pays no platform fee: the promotion does not apply to it.</p>
        ) : !s.eligible ? (
          <p class="muted">You have used all {PROMO_FREE_TRANSACTIONS} free transactions.</p>
        ) : null}
      </section>
      <section class="card">
        <h2>Rules</h2>
        <ul>
          <li>Every new account gets {PROMO_FREE_TRANSACTIONS} completed transactions with the platform fee waived.</li>
          <li>One time per account; it does not expire by date and cannot be transferred.</li>
          <li>It applies to standard, gasless and payer-covers-fee payments, and not together with the Member plan.</li>
          <li>The network (processing) fee and the gas fee still apply.</li>
          <li>The agent markup on a referred merchant is also waived for those transactions.</li>
        </ul>
      </section>
    </>,
  );
});
