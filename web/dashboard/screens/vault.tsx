import { Hono } from "hono";
import { formatAmount } from "../../../core/money.js";
import {
  merchantVault,
  merchantVaults,
  vaultDepositsPage,
  vaultUsersPage,
  type MerchantVault,
  type VaultDepositRow,
} from "../../../modules/vault/index.js";
import type { DashEnv } from "../env.js";
import { screen } from "../layout.js";

// /dashboard/vault: the merchant's vaults (one per API key), read only: configuration, tokens, webhook (its
// secret is never shown, only whether one is set), users with their deposit addresses and deposits, a page
// at a time. Changes go through the Vault API (/api/vault/v1/...), which this screen points to.

const ACTIVE = "/dashboard/vault";

const when = (ms: number | null) => (ms === null ? "—" : `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`);
const pct = (bps: number) => `${formatAmount(BigInt(bps), 2)}%`;
/** Smallest units as a token amount when the decimals are known (exact), else the units as they are. */
const amountOf = (units: string, decimals: number | null) => (decimals === null ? `${units} units` : formatAmount(BigInt(units), decimals));

const NoVault = () => (
  <section class="card" data-testid="no-vault">
    <p>No vault yet. A vault is created once per API key, with the Vault API:</p>
    <pre class="payload">{`curl -X POST https://<this host>/api/vault/v1/config \\
  -H "x-api-key: <your API key>" -H "content-type: application/json" \\
  -d '{"businessName": "My Game", "walletAddress": "0x…", "enabledTokens": [{"chainId": 777177, "token": "0x…", "tokenSymbol": "USDT"}]}'`}</pre>
    <p class="muted">
      Then give each of your users a deposit address with <code>POST /api/vault/v1/users</code>. See docs/vault.md. Your vaults show up
      here.
    </p>
  </section>
);

const VaultSummary = (p: { v: MerchantVault }) => (
  <tr data-testid="vault-row">
    <td>
      <a href={`${ACTIVE}/${p.v.publicId}`}>{p.v.businessName}</a>
    </td>
    <td class="mono">{p.v.publicId}</td>
    <td>
      <span class={`badge ${p.v.isActive ? "active" : "inactive"}`}>{p.v.isActive ? "active" : "inactive"}</span>
    </td>
    <td>
      <code>{p.v.apiKeyPrefix}…</code> {p.v.apiKeyLive ? null : <span class="badge revoked">key revoked</span>}
    </td>
    <td>{when(p.v.createdAt)}</td>
  </tr>
);

const DepositRow = (p: { d: VaultDepositRow }) => (
  <tr data-testid="deposit-row">
    <td>{when(p.d.createdAt)}</td>
    <td class="mono">{p.d.externalUserId}</td>
    <td class="num mono">
      {amountOf(p.d.amount, p.d.tokenDecimals)} {p.d.tokenSymbol}
    </td>
    <td class="num mono">{amountOf(p.d.fee, p.d.tokenDecimals)}</td>
    <td class="num mono">{amountOf(p.d.netAmount, p.d.tokenDecimals)}</td>
    <td>{p.d.chainId}</td>
    <td>
      <span class={`badge ${p.d.status}`} data-testid="deposit-status">
        {p.d.status}
      </span>
      {p.d.hold ? <span class="muted"> ({p.d.hold.replace(/_/g, " ")})</span> : null}
    </td>
    <td class="mono">
      {p.d.depositTxHash ?? "—"}
      {p.d.processTxHash ? <div class="muted">swept: {p.d.processTxHash}</div> : null}
    </td>
  </tr>
);

/** A pager link that keeps the other table's page. */
const pageHref = (publicId: string, q: { users?: string; deposits?: string }) => {
  const params = new URLSearchParams();
  if (q.users) params.set("users", q.users);
  if (q.deposits) params.set("deposits", q.deposits);
  const s = params.toString();
  return `${ACTIVE}/${publicId}${s ? `?${s}` : ""}`;
};

export const vaultScreen = new Hono<DashEnv>()
  .get("/vault", async (c) => {
    const vaults = await merchantVaults(c.var.deps.db, c.var.merchant.id);
    return screen(
      c,
      { title: "Vault", active: ACTIVE },
      vaults.length === 0 ? (
        <NoVault />
      ) : (
        <>
          <p class="muted">One vault per API key. The Vault API changes them; this screen shows them.</p>
          <table data-testid="vaults">
            <thead>
              <tr>
                <th>Business</th>
                <th>Public id</th>
                <th>Status</th>
                <th>API key</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {vaults.map((v) => (
                <VaultSummary v={v} />
              ))}
            </tbody>
          </table>
        </>
      ),
    );
  })
  .get("/vault/:publicId", async (c) => {
    const { deps, merchant } = c.var;
    const { vault, tokens, webhook } = await merchantVault(deps, merchant.id, c.req.param("publicId"));
    const q = { users: c.req.query("users") || undefined, deposits: c.req.query("deposits") || undefined };
    const [users, deposits] = await Promise.all([
      vaultUsersPage(deps.db, vault, { cursor: q.users }),
      vaultDepositsPage(deps.db, vault, { cursor: q.deposits }),
    ]);
    return screen(
      c,
      { title: `Vault: ${vault.businessName}`, active: ACTIVE },
      <>
        <p>
          <a href={ACTIVE}>← Vaults</a>
        </p>
        <section class="card">
          <h2>Configuration</h2>
          <dl class="facts" data-testid="vault-config">
            <dt>Public id</dt>
            <dd class="mono">{vault.publicId}</dd>
            <dt>Status</dt>
            <dd>
              <span class={`badge ${vault.isActive ? "active" : "inactive"}`} data-testid="vault-status">
                {vault.isActive ? "active" : "inactive"}
              </span>
            </dd>
            <dt>Business wallet</dt>
            <dd class="mono">{vault.walletAddress}</dd>
            <dt>Fee</dt>
            <dd>{pct(vault.feeBps)}</dd>
            <dt>API key</dt>
            <dd>
              <code>{vault.apiKeyPrefix}…</code> ({vault.apiKeyName})
            </dd>
            <dt>Created</dt>
            <dd>{when(vault.createdAt)}</dd>
          </dl>
        </section>
        <section class="card">
          <h2>Accepted tokens</h2>
          {tokens.length === 0 ? (
            <p class="muted">
              None: add one with <code>POST /api/vault/v1/config/tokens</code>.
            </p>
          ) : (
            <table data-testid="vault-tokens">
              <thead>
                <tr>
                  <th>Chain</th>
                  <th>Symbol</th>
                  <th>Contract</th>
                  <th class="num">Decimals</th>
                </tr>
              </thead>
              <tbody>
                {tokens.map((t) => (
                  <tr>
                    <td>{t.chainId}</td>
                    <td>{t.tokenSymbol}</td>
                    <td class="mono">{t.tokenAddress}</td>
                    <td class="num">{t.decimals}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
        <section class="card">
          <h2>Webhook</h2>
          {webhook ? (
            <dl class="facts" data-testid="vault-webhook">
              <dt>URL</dt>
              <dd class="mono">{webhook.url}</dd>
              <dt>Events</dt>
              <dd>{webhook.events.join(", ")}</dd>
              <dt>Status</dt>
              <dd>
                <span class={`badge ${webhook.isActive ? "active" : "inactive"}`}>{webhook.isActive ? "active" : "inactive"}</span>
              </dd>
              <dt>Signing secret</dt>
              <dd>{webhook.signed ? "set (shown only when created or regenerated through the API)" : "none: deliveries are unsigned"}</dd>
            </dl>
          ) : (
            <p class="muted">
              No webhook: set one with <code>PUT /api/vault/v1/config/webhooks</code>.
            </p>
          )}
          <p class="muted">
            Vault deliveries are in the <a href="/dashboard/webhooks">webhook delivery log</a>.
          </p>
        </section>
        <h2>Users</h2>
        {users.items.length === 0 ? (
          <p class="muted">No users {q.users ? "on this page" : "yet"}.</p>
        ) : (
          <table data-testid="vault-users">
            <thead>
              <tr>
                <th>User id</th>
                <th>Chain</th>
                <th>Deposit address</th>
                <th>Token</th>
                <th>Since</th>
              </tr>
            </thead>
            <tbody>
              {users.items.map((u) => (
                <tr data-testid="vault-user-row">
                  <td class="mono">{u.externalUserId}</td>
                  <td>{u.chainId}</td>
                  <td class="mono">{u.depositAddress}</td>
                  <td>{u.tokenSymbol}</td>
                  <td>{when(u.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <nav class="pager">
          {q.users ? <a href={pageHref(vault.publicId, { deposits: q.deposits })}>Newest users</a> : null}
          {users.nextCursor ? <a href={pageHref(vault.publicId, { ...q, users: users.nextCursor })}>Older users</a> : null}
        </nav>
        <h2>Deposits</h2>
        {deposits.items.length === 0 ? (
          <p class="muted">No deposits {q.deposits ? "on this page" : "yet"}.</p>
        ) : (
          <table data-testid="vault-deposits">
            <thead>
              <tr>
                <th>Time</th>
                <th>User id</th>
                <th class="num">Amount</th>
                <th class="num">Fee</th>
                <th class="num">Net</th>
                <th>Chain</th>
                <th>Status</th>
                <th>Transaction</th>
              </tr>
            </thead>
            <tbody>
              {deposits.items.map((d) => (
                <DepositRow d={d} />
              ))}
            </tbody>
          </table>
        )}
        <nav class="pager">
          {q.deposits ? <a href={pageHref(vault.publicId, { users: q.users })}>Newest deposits</a> : null}
          {deposits.nextCursor ? <a href={pageHref(vault.publicId, { ...q, deposits: deposits.nextCursor })}>Older deposits</a> : null}
        </nav>
      </>,
    );
  });
