import { Hono, type Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { Invalid, NotFound } from "../../../core/errors.js";
import { deleteWebhook, getWebhook, putWebhook, regenerateWebhookSecret, type WebhookConfigView } from "../../../modules/webhooks/index.js";
import { getDelivery, listDeliveries, resendDelivery, type DeliveryView } from "../../../modules/webhooks/index.js";
import { DEFAULT_PAYMENT_EVENTS, PAYMENT_EVENTS } from "../../../modules/webhooks/index.js";
import { sendTestEvent, TEST_EVENT } from "../../../modules/webhooks/index.js";
import type { DashEnv } from "../env.js";
import { setFlash, takeFlash, type Flash } from "../flash.js";
import { CsrfField, FlashView, Notice, PostButton, screen } from "../layout.js";

// /dashboard/webhooks: the payment webhook of the signed-in merchant (the module functions of /v1/webhooks, so
// the same validation: HTTPS, no private targets, known events), its delivery log (payment and Vault
// deliveries, newest first), each delivery's attempts, manual resend (the CLI's function) and a test event.
// Every action answers 303; a new secret travels to the screen in the one-time flash (web/dashboard/flash.ts).

const ACTIVE = "/dashboard/webhooks";
/** Characters of a response body shown in the log (the delivery keeps up to 1000). */
const EXCERPT_CHARS = 200;

const when = (ms: number | null) => (ms === null ? "—" : `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`);
const excerpt = (text: string | null, max = EXCERPT_CHARS) => (text === null ? "" : text.length > max ? `${text.slice(0, max)}…` : text);
const str = (v: unknown) => (typeof v === "string" ? v : "");
const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : typeof v === "string" ? [v] : [];

type FormValues = { url: string; events: string[]; isActive: boolean };

const StatusBadge = (p: { status: string }) => (
  <span class={`badge ${p.status}`} data-testid="delivery-status">
    {p.status}
  </span>
);

const ConfigForm = (p: { csrf: string; values: FormValues; exists: boolean }) => (
  <form method="post" action={ACTIVE} data-testid="webhook-form">
    <CsrfField csrf={p.csrf} />
    <label>
      Endpoint URL <small>(HTTPS, reachable from the internet)</small>
      <input type="url" name="url" required maxlength={2000} placeholder="https://shop.example/hooks/payments" value={p.values.url} />
    </label>
    <fieldset class="events">
      <legend>Events</legend>
      {PAYMENT_EVENTS.map((e) => (
        <label class="check">
          <input type="checkbox" name="events" value={e} checked={p.values.events.includes(e)} />
          <code>{e}</code>
        </label>
      ))}
    </fieldset>
    <label class="check">
      <input type="checkbox" name="isActive" value="on" checked={p.values.isActive} />
      Active (deliver events to this URL)
    </label>
    <button type="submit">{p.exists ? "Save" : "Create webhook"}</button>
  </form>
);

const ConfigFacts = (p: { config: WebhookConfigView }) => (
  <dl class="facts">
    <dt>Status</dt>
    <dd>
      <span class={`badge ${p.config.isActive ? "active" : "inactive"}`} data-testid="webhook-active">
        {p.config.isActive ? "active" : "inactive"}
      </span>
    </dd>
    <dt>Signing</dt>
    <dd>
      {p.config.signing === "secret" ? (
        <>
          dedicated secret <code>{p.config.secret}</code>
        </>
      ) : (
        <>
          legacy: signed with the API key <code>{p.config.legacyApiKeyPrefix}…</code>
        </>
      )}
    </dd>
    <dt>Updated</dt>
    <dd>{when(p.config.updatedAt)}</dd>
  </dl>
);

const DeliveryRow = (p: { d: DeliveryView; csrf: string }) => (
  <tr data-testid="delivery-row" data-delivery-id={p.d.id}>
    <td>
      <a href={`${ACTIVE}/deliveries/${p.d.id}`}>
        <code>{p.d.event}</code>
      </a>
      {p.d.kind === "vault" ? <span class="badge">vault</span> : null}
    </td>
    <td>
      {p.d.paymentId ? (
        <a href={`/dashboard/payments/${p.d.paymentId}`} class="mono">
          {p.d.paymentId}
        </a>
      ) : p.d.depositId ? (
        <span class="mono">{p.d.depositId}</span>
      ) : (
        <span class="muted">—</span>
      )}
    </td>
    <td>
      <StatusBadge status={p.d.status} />
    </td>
    <td class="num" data-testid="delivery-attempts">
      {p.d.attempts}/{p.d.maxAttempts}
    </td>
    <td class="num">{p.d.httpStatus ?? "—"}</td>
    <td>{when(p.d.lastAttemptAt)}</td>
    <td class="mono excerpt">{excerpt(p.d.response)}</td>
    <td>{p.d.error ?? ""}</td>
    <td>
      <PostButton action={`${ACTIVE}/deliveries/${p.d.id}/resend`} csrf={p.csrf} label="Resend" kind="secondary" />
    </td>
  </tr>
);

const DeliveryLog = (p: { deliveries: DeliveryView[]; csrf: string; nextCursor: string | null; paged: boolean }) => (
  <section>
    <h2>Delivery log</h2>
    {p.deliveries.length === 0 ? (
      <p class="muted">No deliveries {p.paged ? "on this page" : "yet"}.</p>
    ) : (
      <div class="table-wrap">
        <table data-testid="delivery-log">
          <thead>
            <tr>
              <th>Event</th>
              <th>Payment / deposit</th>
              <th>Status</th>
              <th class="num">Attempts</th>
              <th class="num">HTTP</th>
              <th>Last attempt</th>
              <th>Response</th>
              <th>Error</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {p.deliveries.map((d) => (
              <DeliveryRow d={d} csrf={p.csrf} />
            ))}
          </tbody>
        </table>
      </div>
    )}
    <nav class="pager">
      {p.paged ? <a href={ACTIVE}>Newest</a> : null}
      {p.nextCursor ? <a href={`${ACTIVE}?cursor=${encodeURIComponent(p.nextCursor)}`}>Older deliveries</a> : null}
    </nav>
  </section>
);

/** The whole screen: notices, what a POST left (the secret shown once), the configuration and the log. */
async function webhooksPage(
  c: Context<DashEnv>,
  opts: { notice?: { kind: "ok" | "error"; text: string }; flash?: Flash | null; values?: FormValues; status?: ContentfulStatusCode } = {},
) {
  const { deps, merchant, csrf } = c.var;
  const config = await getWebhook(deps, merchant.id).catch((e) => {
    if (e instanceof NotFound) return null;
    throw e;
  });
  const cursor = c.req.query("cursor");
  const log = await listDeliveries(deps.db, { merchantId: merchant.id }, { limit: "25", cursor: cursor || undefined });
  const values = opts.values ?? {
    url: config?.url ?? "",
    events: config?.events ?? DEFAULT_PAYMENT_EVENTS,
    isActive: config?.isActive ?? true,
  };
  return screen(
    c,
    { title: "Webhooks", active: ACTIVE, status: opts.status },
    <>
      {opts.notice ? <Notice kind={opts.notice.kind}>{opts.notice.text}</Notice> : null}
      <FlashView flash={opts.flash ?? null} />
      <section class="card">
        <h2>Payment webhook</h2>
        {config ? <ConfigFacts config={config} /> : <p class="muted">No webhook yet: enter the URL that receives payment events.</p>}
        <ConfigForm csrf={csrf} values={values} exists={!!config} />
      </section>
      {config ? (
        <section class="card actions">
          <PostButton action={`${ACTIVE}/test`} csrf={csrf} label="Send test event" />
          <PostButton
            action={`${ACTIVE}/secret`}
            csrf={csrf}
            label="Regenerate secret"
            kind="secondary"
            confirm="The current secret stops signing at once. Regenerate?"
          />
          <PostButton action={`${ACTIVE}/delete`} csrf={csrf} label="Delete webhook" kind="danger" confirm="Delete this webhook?" />
          <p class="muted">
            The test event (<code>{TEST_EVENT}</code>) is signed and sent like any event, whatever the events chosen above.
          </p>
        </section>
      ) : null}
      <DeliveryLog deliveries={log.deliveries} csrf={csrf} nextCursor={log.nextCursor} paged={!!cursor} />
    </>,
  );
}

const Attempts = (p: { attempts: Awaited<ReturnType<typeof getDelivery>>["attemptLog"] }) =>
  p.attempts.length === 0 ? (
    <p class="muted">No attempt yet.</p>
  ) : (
    <table data-testid="attempt-log">
      <thead>
        <tr>
          <th class="num">#</th>
          <th>Time</th>
          <th>URL</th>
          <th class="num">HTTP</th>
          <th class="num">ms</th>
          <th>Response</th>
          <th>Error</th>
        </tr>
      </thead>
      <tbody>
        {p.attempts.map((a) => (
          <tr data-testid="attempt-row">
            <td class="num">{a.attempt}</td>
            <td>{when(a.at)}</td>
            <td class="mono">{a.url}</td>
            <td class="num">{a.httpStatus ?? "—"}</td>
            <td class="num">{a.durationMs ?? "—"}</td>
            <td class="mono excerpt">{excerpt(a.response)}</td>
            <td>{a.error ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );

/** Post-redirect-get with the secret in the one-time flash: a reload of the screen neither shows nor regenerates it. */
function shownOnce(c: Context<DashEnv>, text: string, secret: string | null) {
  setFlash(c, ACTIVE, {
    notices: [{ kind: "ok", text }],
    secret: secret ? { label: "Webhook signing secret", value: secret, testId: "webhook-secret" } : undefined,
  });
  return c.redirect(ACTIVE, 303);
}

export const webhooksScreen = new Hono<DashEnv>()
  .get("/webhooks", (c) => {
    const sent = c.req.query("sent");
    const notice = c.req.query("saved")
      ? { kind: "ok" as const, text: "Webhook saved." }
      : c.req.query("deleted")
        ? { kind: "ok" as const, text: "Webhook deleted." }
        : sent
          ? { kind: "ok" as const, text: "Test event queued: it appears in the log below once sent." }
          : undefined;
    return webhooksPage(c, { notice, flash: takeFlash(c, ACTIVE) });
  })
  .post("/webhooks", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const values: FormValues = { url: str(form.url).trim(), events: list(form.events), isActive: form.isActive === "on" };
    try {
      const r = await putWebhook(c.var.deps, { merchantId: c.var.merchant.id }, values);
      if (!r.created) return c.redirect(`${ACTIVE}?saved=1`, 303);
      // Created: the whole secret is shown once, on the screen this redirects to.
      return shownOnce(c, "Webhook created.", r.webhook.secret);
    } catch (e) {
      if (!(e instanceof Invalid)) throw e;
      return webhooksPage(c, { notice: { kind: "error", text: e.message }, values, status: c.var.statusOf(e) });
    }
  })
  .post("/webhooks/secret", async (c) => {
    const { secret } = await regenerateWebhookSecret(c.var.deps, c.var.merchant.id, { action: "regenerate-secret" });
    return shownOnce(c, "New secret generated: the old one no longer signs.", secret);
  })
  .post("/webhooks/delete", async (c) => {
    await deleteWebhook(c.var.deps, c.var.merchant.id);
    return c.redirect(`${ACTIVE}?deleted=1`, 303);
  })
  .post("/webhooks/test", async (c) => {
    const { deliveryId } = await sendTestEvent(c.var.deps, c.var.merchant.id);
    return c.redirect(`${ACTIVE}?sent=${deliveryId}`, 303);
  })
  .get("/webhooks/deliveries/:id", async (c) => {
    const d = await getDelivery(c.var.deps.db, c.req.param("id"), { merchantId: c.var.merchant.id });
    return screen(
      c,
      { title: "Webhook delivery", active: ACTIVE },
      <>
        {c.req.query("resent") ? <Notice kind="ok">Resend queued: the dispatcher makes one more attempt now.</Notice> : null}
        <p>
          <a href={ACTIVE}>← Webhooks</a>
        </p>
        <section class="card">
          <dl class="facts" data-testid="delivery-facts">
            <dt>Event</dt>
            <dd>
              <code>{d.event}</code> ({d.kind})
            </dd>
            <dt>Status</dt>
            <dd>
              <StatusBadge status={d.status} />
            </dd>
            <dt>Attempts</dt>
            <dd data-testid="delivery-attempts">
              {d.attempts}/{d.maxAttempts}
            </dd>
            {d.paymentId ? (
              <>
                <dt>Payment</dt>
                <dd>
                  <a href={`/dashboard/payments/${d.paymentId}`} class="mono">
                    {d.paymentId}
                  </a>
                </dd>
              </>
            ) : null}
            {d.depositId ? (
              <>
                <dt>Deposit</dt>
                <dd class="mono">{d.depositId}</dd>
              </>
            ) : null}
            <dt>Created</dt>
            <dd>{when(d.createdAt)}</dd>
            <dt>Next attempt</dt>
            <dd>{when(d.nextAttemptAt)}</dd>
            <dt>Delivered</dt>
            <dd>{when(d.deliveredAt)}</dd>
          </dl>
          <PostButton action={`${ACTIVE}/deliveries/${d.id}/resend`} csrf={c.var.csrf} label="Resend" />
        </section>
        <h2>Attempts</h2>
        <Attempts attempts={d.attemptLog} />
        <h2>Payload</h2>
        <pre class="payload">{JSON.stringify(d.payload, null, 2)}</pre>
      </>,
    );
  })
  .post("/webhooks/deliveries/:id/resend", async (c) => {
    // The CLI's resend (cli/webhooks.ts): one more attempt allowed, due now; the dispatcher sends it.
    const d = await resendDelivery(c.var.deps.db, c.req.param("id"), c.var.deps.now(), { merchantId: c.var.merchant.id });
    return c.redirect(`${ACTIVE}/deliveries/${d.id}?resent=1`, 303);
  });
