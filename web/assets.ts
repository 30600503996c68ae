import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build, buildSync, type BuildOptions } from "esbuild";
import type { Context } from "hono";

/**
 * The web pages' stylesheets and scripts, served by the app itself (no CDN, no build step before start): each page's
 * folder holds `<page>.css` as written and a `client.ts` that esbuild bundles (with what it imports) into `<page>.js`
 * on first use. URLs carry the content hash (`?v=`), so they are cached for good and change with the content.
 */

export type TextAsset = { body: string; contentType: string; /** Content hash: the `?v=` of the page's asset URLs. */ hash: string };
/** A page's two files, e.g. `PageAssets<"pay">` = { "pay.css", "pay.js" }. */
export type PageAssets<P extends string> = Record<`${P}.css` | `${P}.js`, TextAsset>;

const CSS = "text/css; charset=utf-8";
const JS = "text/javascript; charset=utf-8";

/**
 * A text file to serve, with its content hash.
 * @example textAsset("body{}", "text/css; charset=utf-8").hash // 16 hex digits of its SHA-256
 */
export const textAsset = (body: string, contentType: string): TextAsset => ({
  body,
  contentType,
  hash: createHash("sha256").update(body).digest("hex").slice(0, 16),
});

// One script for the browsers the pages support, nothing written to disk.
const CLIENT_BUILD = {
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  target: "es2019",
  minify: true,
  legalComments: "none",
  logLevel: "silent",
} as const satisfies BuildOptions;

/**
 * The browser script of `entryPath` with what it imports, as one minified file.
 * @example await bundleClient("/srv/web/pay/client.ts")
 */
export async function bundleClient(entryPath: string): Promise<string> {
  const out = await build({ ...CLIENT_BUILD, entryPoints: [entryPath] });
  return out.outputFiles[0]!.text;
}

/** bundleClient, blocking: for pages that render their asset URLs synchronously (the dashboard's layout). */
export function bundleClientSync(entryPath: string): string {
  return buildSync({ ...CLIENT_BUILD, entryPoints: [entryPath] }).outputFiles[0]!.text;
}

/** A file of the page folder `dirUrl` (a module's `import.meta.url`), whatever the working directory. */
const beside = (dirUrl: string, file: string) => fileURLToPath(new URL(file, dirUrl));

/**
 * The page's `<page>.css` and bundled `client.ts` (as `<page>.js`), both in the folder of `dirUrl`.
 * @example await loadPageAssets(import.meta.url, "pay") // { "pay.css": …, "pay.js": … }
 */
export async function loadPageAssets<P extends string>(dirUrl: string, page: P): Promise<PageAssets<P>> {
  const [css, js] = await Promise.all([readFile(beside(dirUrl, `./${page}.css`), "utf8"), bundleClient(beside(dirUrl, "./client.ts"))]);
  return pageAssets(page, css, js);
}

/** loadPageAssets, blocking. */
export function loadPageAssetsSync<P extends string>(dirUrl: string, page: P): PageAssets<P> {
  return pageAssets(page, readFileSync(beside(dirUrl, `./${page}.css`), "utf8"), bundleClientSync(beside(dirUrl, "./client.ts")));
}

const pageAssets = <P extends string>(page: P, css: string, js: string) =>
  ({ [`${page}.css`]: textAsset(css, CSS), [`${page}.js`]: textAsset(js, JS) }) as PageAssets<P>;

/** Whether `file` names one of the page's two files (checked before anything is built). */
export const isPageAsset = <P extends string>(page: P, file: string): file is `${P}.css` | `${P}.js` =>
  file === `${page}.css` || file === `${page}.js`;

/**
 * Built once and kept, one build at a time however many requests wait for it; a failed build is tried again on the
 * next call.
 * @example export const payAssets = lazyAssets(() => loadPageAssets(import.meta.url, "pay"));
 */
export function lazyAssets<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err) => {
      loading = undefined;
      throw err;
    }));
}

/**
 * The page's asset URLs under their content hash, below `prefix` (the folder the assets route serves).
 * @example assetUrls("/pos/assets/", "pos", assets) // { css: "/pos/assets/pos.css?v=…", js: "/pos/assets/pos.js?v=…" }
 */
export const assetUrls = <P extends string>(prefix: string, page: P, a: PageAssets<P>) => ({
  css: `${prefix}${page}.css?v=${a[`${page}.css`].hash}`,
  js: `${prefix}${page}.js?v=${a[`${page}.js`].hash}`,
});

/**
 * The response of an assets route: 404 without an asset; immutable under its content hash (`?v=`), revalidated
 * otherwise; never sniffed. With `etag`, a matching If-None-Match gets 304.
 * @example pos.get("/assets/:file", async (c) => serveAsset(c, isPageAsset("pos", f) ? (await posAssets())[f] : undefined))
 */
export function serveAsset(c: Context, asset: TextAsset | undefined, opts: { etag?: boolean } = {}): Response {
  if (!asset) return c.text("Not found", 404);
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cache-Control", c.req.query("v") === asset.hash ? "public, max-age=31536000, immutable" : "no-cache");
  if (opts.etag) {
    c.header("ETag", `"${asset.hash}"`);
    if (c.req.header("If-None-Match") === `"${asset.hash}"`) return c.body(null, 304);
  }
  return c.body(asset.body, 200, { "Content-Type": asset.contentType });
}
