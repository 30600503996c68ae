import { assetUrls, lazyAssets, loadPageAssets, type PageAssets } from "../assets.js";

/**
 * The POS page's stylesheet and script, served by the app itself (no CDN): pos.css as written, client.ts bundled
 * with esbuild (with texts.ts) once per process, on first use (web/assets.ts). URLs carry the content hash (`?v=`).
 */
export type PosAssets = PageAssets<"pos">;

/** Built once and kept; a failed build is tried again on the next request. */
export const posAssets = lazyAssets(() => loadPageAssets(import.meta.url, "pos"));

/** The page's asset URLs, under their content hash. */
export const posAssetUrls = (a: PosAssets) => assetUrls("/pos/assets/", "pos", a);
export type PosAssetUrls = ReturnType<typeof posAssetUrls>;
