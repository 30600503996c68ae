import { assetUrls, lazyAssets, loadPageAssets, type PageAssets } from "../assets.js";

/**
 * The payer page's stylesheet and script, served by the app itself (no CDN): pay.css as written,
 * client.ts bundled with esbuild (with texts.ts) once per process, on first use (web/assets.ts).
 */
export type PayAssets = PageAssets<"pay">;

/** Built once and kept; a failed build is tried again on the next request. */
export const payAssets = lazyAssets(() => loadPageAssets(import.meta.url, "pay"));

/** Relative to /pay/<id>, like the script's status and QR URLs, so the app can sit behind a path prefix. */
export const payAssetUrls = (a: PayAssets) => assetUrls("assets/", "pay", a);
