import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { gzipSync } from "node:zlib";
import { Hono } from "hono";
import type { AppEnv } from "../context.js";
import { openApiDocument } from "./document.js";

// GET /api/openapi.json and the interactive reference GET /api/docs: Swagger UI from the installed swagger-ui-dist,
// served by the service itself (no CDN), with its start-up script as a file so a strict CSP (no inline script)
// holds. Mounted inside the /api sub-app: the per-address flood guard counts these requests too (a page load is
// six requests against a budget of 3000 a minute).

type Asset = { body: Uint8Array<ArrayBuffer>; gzip: Uint8Array<ArrayBuffer>; contentType: string; hash: string };

/**
 * The page's start-up: the document's URL is relative to this script (`…/api/docs/assets/init.js`), so a path prefix
 * works. The standalone layout's top bar is left out: it only loads other documents, and its logo is an SVG with an
 * inline <style> that the page's CSP refuses.
 */
const INIT_JS = `(function () {
  var spec = new URL("../../openapi.json", document.currentScript.src).href;
  var noTopbar = function () {
    return { components: { Topbar: function () { return null; } } };
  };
  window.ui = SwaggerUIBundle({
    url: spec,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl, noTopbar],
    layout: "StandaloneLayout",
  });
})();
`;

const FROM_DIST = {
  "swagger-ui.css": "text/css; charset=utf-8",
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui-standalone-preset.js": "text/javascript; charset=utf-8",
  "favicon-32x32.png": "image/png",
} as const;
export type DocsAssetName = keyof typeof FROM_DIST | "init.js";
export const DOCS_ASSETS: readonly DocsAssetName[] = [...(Object.keys(FROM_DIST) as (keyof typeof FROM_DIST)[]), "init.js"];

const asset = (body: Buffer, contentType: string): Asset => ({
  body: new Uint8Array(body),
  gzip: new Uint8Array(gzipSync(body)),
  contentType,
  hash: createHash("sha256").update(body).digest("hex").slice(0, 16),
});

/** swagger-ui-dist's folder, wherever npm put it. */
const distDir = () => dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

async function load(): Promise<Record<DocsAssetName, Asset>> {
  const dir = distDir();
  const entries = await Promise.all(
    Object.entries(FROM_DIST).map(async ([name, type]) => [name, asset(await readFile(join(dir, name)), type)] as const),
  );
  return { ...Object.fromEntries(entries), "init.js": asset(Buffer.from(INIT_JS), "text/javascript; charset=utf-8") } as Record<
    DocsAssetName,
    Asset
  >;
}

let loading: Promise<Record<DocsAssetName, Asset>> | undefined;
/** Read (and compressed) once per process; a failed read is tried again on the next request. */
function docsAssets() {
  loading ??= load().catch((err) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** Relative to /api/docs, so the page works behind a path prefix; `?v=` is the content hash (cached for good). */
const url = (assets: Record<DocsAssetName, Asset>, name: DocsAssetName) => `docs/assets/${name}?v=${assets[name].hash}`;

function page(assets: Record<DocsAssetName, Asset>): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · chainpay</title>
<link rel="icon" type="image/png" href="${url(assets, "favicon-32x32.png")}">
<link rel="stylesheet" href="${url(assets, "swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${url(assets, "swagger-ui-bundle.js")}"></script>
<script src="${url(assets, "swagger-ui-standalone-preset.js")}"></script>
<script src="${url(assets, "init.js")}"></script>
</body>
</html>
`;
}

const originOf = (u: string) => {
  try {
    return new URL(u).origin;
  } catch {
    return "";
  }
};

/** Routes of the reference, mounted at /api by api/app.ts. */
export const apiDocs = new Hono<AppEnv>();

/** GET /openapi.json: public, any origin may read it (tools), cached briefly. */
apiDocs.get("/openapi.json", (c) => {
  c.header("Cache-Control", "public, max-age=60");
  c.header("Access-Control-Allow-Origin", "*");
  c.header("X-Content-Type-Options", "nosniff");
  return c.json(openApiDocument(c.var.deps.config.baseUrl));
});

/** GET /docs: the page. Scripts and styles only from here; "Try it out" may call the API's own origin (BASE_URL). */
apiDocs.get("/docs", async (c) => {
  const assets = await docsAssets();
  const connect = ["'self'", originOf(c.var.deps.config.baseUrl)].filter(Boolean).join(" ");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src ${connect}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  );
  c.header("Referrer-Policy", "no-referrer");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cache-Control", "no-cache");
  return c.html(page(assets));
});

/** GET /docs/assets/:file: immutable under their content hash (`?v=`), revalidated otherwise; gzip when accepted. */
apiDocs.get("/docs/assets/:file", async (c) => {
  const name = c.req.param("file") as DocsAssetName;
  if (!DOCS_ASSETS.includes(name)) return c.text("Not found", 404);
  const a = (await docsAssets())[name];
  const etag = `"${a.hash}"`;
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cache-Control", c.req.query("v") === a.hash ? "public, max-age=31536000, immutable" : "no-cache");
  c.header("ETag", etag);
  c.header("Vary", "Accept-Encoding");
  if (c.req.header("If-None-Match") === etag) return c.body(null, 304);
  const gzip = /\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "");
  if (gzip) c.header("Content-Encoding", "gzip");
  return c.body(gzip ? a.gzip : a.body, 200, { "Content-Type": a.contentType });
});
