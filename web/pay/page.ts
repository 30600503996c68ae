import { randomBytes } from "node:crypto";
import { Hono, type Context } from "hono";
import QRCode from "qrcode";
import { publicPaymentView } from "../../modules/payments/index.js";
import type { AppDeps } from "../../core/deps.js";
import { isPageAsset, serveAsset } from "../assets.js";
import { payAssets, payAssetUrls } from "./assets.js";
import { payerBridgeState } from "./bridge-options.js";
import { notFoundPage, payerPage } from "./template.js";

/**
 * The payer page `{app_url}/pay/<paymentId>` (mounted at the root, outside /api), its QR image, its
 * stylesheet and script, and the public status route it polls. The status route carries its full path
 * (`/api/payments/:paymentId/status`) because this app is mounted at the root; it cannot shadow
 * `/api/payments/verify` (one segment fewer, and matched first by the /api sub-app).
 *
 * Everything here is public: the payment id (a random UUID) is the only capability, and the view
 * holds nothing beyond what the payer needs (see modules/payments/public-view.ts).
 * The HTML is in template.ts, the styles in pay.css, the script in client.ts, their shared texts in texts.ts.
 */
/** The pages need only the dependencies (set by the app that mounts them). */
type PayEnv = { Variables: { deps: AppDeps } };

export const payPage = new Hono<PayEnv>();

const noStore = (c: Context) => {
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
};

/** GET /api/payments/:paymentId/status: the public view, polled by the payer page. */
payPage.get("/api/payments/:paymentId/status", async (c) => {
  noStore(c);
  const view = await publicPaymentView(c.var.deps, c.req.param("paymentId"));
  if (!view) return c.json({ error: "Payment not found" }, 404);
  return c.json(view);
});

/** GET /pay/assets/pay.css and pay.js: immutable under their content hash (`?v=`), revalidated otherwise. */
payPage.get("/pay/assets/:file", async (c) => {
  const file = c.req.param("file");
  return serveAsset(c, isPageAsset("pay", file) ? (await payAssets())[file] : undefined, { etag: true });
});

/** GET /pay/:paymentId/qr.svg: the QR of what is still to pay (the page swaps it in after a partial payment). */
payPage.get("/pay/:paymentId/qr.svg", async (c) => {
  noStore(c);
  const view = await publicPaymentView(c.var.deps, c.req.param("paymentId"));
  if (!view) return c.text("Payment not found", 404);
  c.header("Content-Security-Policy", "default-src 'none'");
  return c.body(await qrSvg(view.paymentUri), 200, { "Content-Type": "image/svg+xml; charset=utf-8" });
});

/** GET /pay/:paymentId: the server-rendered payer page. */
payPage.get("/pay/:paymentId", async (c) => {
  noStore(c);
  // The page's own stylesheet and script carry the nonce; nothing inline runs.
  const nonce = randomBytes(16).toString("base64");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  c.header("Referrer-Policy", "no-referrer");
  const [view, assets] = await Promise.all([publicPaymentView(c.var.deps, c.req.param("paymentId")), payAssets()]);
  const urls = payAssetUrls(assets);
  if (!view) return c.html(notFoundPage(nonce, urls), 404);
  return c.html(payerPage(view, await qrSvg(view.paymentUri), nonce, urls, payerBridgeState(c.var.deps, view)));
});

function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M", color: { dark: "#111827", light: "#ffffff" } });
}
