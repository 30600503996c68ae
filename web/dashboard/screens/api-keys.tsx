import { Hono, type Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDomainError } from "../../../core/errors.js";
import {
  createNamedApiKey,
  listApiKeys,
  NAME_MAX,
  revokeApiKey,
  ROLL_OVERLAPS,
  type ApiKeyView,
} from "../../../modules/merchants/index.js";
import { rollApiKey } from "../../../flows/roll-api-key.js";
import type { DashEnv } from "../env.js";
import { setFlash, takeFlash, type Flash } from "../flash.js";
import { CsrfField, FlashView, Notice, PostButton, screen } from "../layout.js";
import { when } from "./payments.js";

// The API keys screen: the merchant's keys (name, prefix, created, last used, status), create a named key
// (shown once), revoke, and roll with an overlap period (the new key shown once; the old key's vault moves to it).
// Every action answers 303 to the screen; a new key travels in the one-time flash (web/dashboard/flash.ts), so
// a reload neither shows it again nor mints another.

type Ctx = Context<DashEnv>;
const ACTIVE = "/dashboard/api-keys";

const OVERLAP_LABELS: Record<keyof typeof ROLL_OVERLAPS, string> = {
  none: "none (old key stops now)",
  "1h": "1 hour",
  "24h": "24 hours",
  "7d": "7 days",
};

const LEGACY_NOTE =
  "Your payment webhook is a legacy one that signs with this key. It keeps signing with it, also once the key no longer " +
  "works for the API; generate a dedicated webhook secret on the Webhooks screen to stop depending on this key.";

const StatusCell = (p: { k: ApiKeyView }) => {
  const text =
    p.k.status === "expiring"
      ? `expires at ${when(p.k.expiresAt)}`
      : p.k.status === "expired"
        ? `expired at ${when(p.k.expiresAt)}`
        : p.k.status;
  const badge = p.k.status === "expiring" ? "pending" : p.k.status === "expired" ? "expired" : p.k.status;
  return (
    <span class={`badge ${badge}`} data-testid="key-status">
      {text}
    </span>
  );
};

const usable = (k: ApiKeyView) => k.status === "active" || k.status === "expiring";

const KeyRow = (p: { k: ApiKeyView; csrf: string }) => {
  const k = p.k;
  const revokeQuestion =
    `Revoke the key “${k.name}” (${k.prefix}…)? Requests with it are refused at once.` +
    (k.vault
      ? ` The vault “${k.vault.businessName}” is bound to it and becomes unreachable by the Vault API (roll the key instead to move it).`
      : "");
  return (
    <tr data-testid="api-key-row" data-key-id={k.id}>
      <td>
        {k.name}
        {k.vault ? (
          <div class="muted" data-testid="key-vault">
            Vault: {k.vault.businessName} <code>{k.vault.publicId}</code>
          </div>
        ) : null}
        {k.signsLegacyWebhook ? (
          <div class="muted" data-testid="key-legacy-webhook">
            Signs your legacy payment webhook
          </div>
        ) : null}
      </td>
      <td class="mono">{k.prefix}…</td>
      <td>{when(k.createdAt)}</td>
      <td>{k.lastUsedAt ? when(k.lastUsedAt) : "never"}</td>
      <td>
        <StatusCell k={k} />
      </td>
      <td class="key-actions">
        {k.status === "active" ? (
          <form method="post" action={`/dashboard/api-keys/${k.id}/roll`} class="roll" data-confirm={`Roll the key “${k.name}”?`}>
            <CsrfField csrf={p.csrf} />
            <label>
              Overlap
              <select name="overlap">
                {Object.entries(OVERLAP_LABELS).map(([v, label]) => (
                  <option value={v} selected={v === "24h"}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" class="secondary">
              Roll
            </button>
          </form>
        ) : null}
        {usable(k) ? (
          <PostButton action={`/dashboard/api-keys/${k.id}/revoke`} csrf={p.csrf} label="Revoke" kind="danger" confirm={revokeQuestion} />
        ) : null}
      </td>
    </tr>
  );
};

const CreateForm = (p: { csrf: string; name?: string }) => (
  <form method="post" action="/dashboard/api-keys" class="row card">
    <CsrfField csrf={p.csrf} />
    <label>
      Name <small>(what the key is for, e.g. “shop backend”)</small>
      <input type="text" name="name" required maxlength={NAME_MAX} value={p.name ?? ""} />
    </label>
    <button type="submit">Create API key</button>
  </form>
);

/** The screen: notices (or what a POST left: web/dashboard/flash.ts) above the form and the table of keys. */
async function keysPage(c: Ctx, top: Child, opts: { status?: ContentfulStatusCode; name?: string } = {}) {
  const keys = await listApiKeys(c.var.deps, c.var.merchant.id);
  return screen(
    c,
    { title: "API keys", active: ACTIVE, status: opts.status },
    <>
      {top}
      <p class="muted">
        Send a key in the <code>x-api-key</code> header from your server only. Never put it in a web page or an app.
      </p>
      <CreateForm csrf={c.var.csrf} name={opts.name} />
      {keys.length === 0 ? (
        <p class="muted">No API key yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Prefix</th>
              <th>Created</th>
              <th>Last used</th>
              <th>Status</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <KeyRow k={k} csrf={c.var.csrf} />
            ))}
          </tbody>
        </table>
      )}
    </>,
  );
}

const notFound = (c: Ctx, message: string, status: ContentfulStatusCode) =>
  screen(
    c,
    { title: "API key not found", active: ACTIVE, status },
    <>
      <Notice kind="error">{message}</Notice>
      <p>
        <a href={ACTIVE}>Back to the API keys</a>
      </p>
    </>,
  );

/** A refused action: the not-found page for a key the merchant does not have, else the screen with the message. */
function refused(c: Ctx, err: unknown, name?: string) {
  if (!isDomainError(err)) throw err;
  if (err.kind === "not_found") return notFound(c, err.message, c.var.statusOf(err));
  if (err.kind !== "invalid" && err.kind !== "conflict") throw err;
  return keysPage(c, <Notice kind="error">{err.message}</Notice>, { status: c.var.statusOf(err), name });
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

/** Post-redirect-get: what the action leaves for the screen (a new key is shown there once), then 303 to it. */
const done = (c: Ctx, flash: Flash) => {
  setFlash(c, ACTIVE, flash);
  return c.redirect(ACTIVE, 303);
};

const newKey = (name: string, key: string): Flash["secret"] => ({ label: `New API key “${name}”`, value: key, testId: "new-api-key" });

export const apiKeysScreen = new Hono<DashEnv>()
  .get("/api-keys", (c) => keysPage(c, <FlashView flash={takeFlash(c, ACTIVE)} />))
  .post("/api-keys", async (c) => {
    const name = str((await c.req.parseBody()).name);
    try {
      const created = await createNamedApiKey(c.var.deps, c.var.merchant.id, name);
      return done(c, { secret: newKey(created.apiKey.name, created.key) });
    } catch (err) {
      return refused(c, err, name);
    }
  })
  .post("/api-keys/:keyId/revoke", async (c) => {
    try {
      const k = await revokeApiKey(c.var.deps, c.var.merchant.id, c.req.param("keyId"));
      return done(c, {
        notices: [
          k.signsLegacyWebhook
            ? { kind: "warn", text: `The API key was revoked. ${LEGACY_NOTE}` }
            : { kind: "ok", text: "The API key was revoked: requests with it are refused." },
        ],
      });
    } catch (err) {
      return refused(c, err);
    }
  })
  .post("/api-keys/:keyId/roll", async (c) => {
    const overlap = (await c.req.parseBody()).overlap;
    try {
      const r = await rollApiKey(c.var.deps, c.var.merchant.id, c.req.param("keyId"), overlap);
      const old =
        r.previous.status === "revoked"
          ? `The old key (${r.previous.prefix}…) was revoked.`
          : `The old key (${r.previous.prefix}…) keeps working until ${when(r.previous.expiresAt)}.`;
      const moved = r.movedVault
        ? ` The vault “${r.movedVault.businessName}” (${r.movedVault.publicId}) is now reached with the new key.`
        : "";
      const notices: Flash["notices"] = [{ kind: "ok", text: old + moved, testId: "roll-result" }];
      if (r.previous.signsLegacyWebhook) notices.push({ kind: "warn", text: LEGACY_NOTE, testId: "legacy-webhook-note" });
      return done(c, { secret: newKey(r.apiKey.name, r.key), notices });
    } catch (err) {
      return refused(c, err);
    }
  });
