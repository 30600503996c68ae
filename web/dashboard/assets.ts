import { isPageAsset, loadPageAssetsSync, type PageAssets, type TextAsset } from "../assets.js";

/**
 * The dashboard's stylesheet and script, served by the app (no CDN, no build step before start): dashboard.css
 * as written, client.ts bundled by esbuild on first use (web/assets.ts). Built synchronously: the layout renders
 * its asset URLs synchronously. URLs carry the content hash (`?v=`), so they are cached for good and change with
 * the content.
 */
export type DashAssetName = keyof PageAssets<"dashboard">;

let loaded: PageAssets<"dashboard"> | undefined;

export function dashboardAsset(name: string): TextAsset | undefined {
  loaded ??= loadPageAssetsSync(import.meta.url, "dashboard");
  return isPageAsset("dashboard", name) ? loaded[name] : undefined;
}

export const assetUrl = (name: DashAssetName) => `/dashboard/assets/${name}?v=${dashboardAsset(name)!.hash}`;
