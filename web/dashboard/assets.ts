import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

/**
 * The dashboard's stylesheet and script, served by the app (no CDN, no build step before start): dashboard.css
 * as written, client.ts bundled by esbuild on first use. URLs carry the content hash (`?v=`), so they are cached
 * for good and change with the content.
 */
export type DashAsset = { body: string; contentType: string; hash: string };
export type DashAssetName = "dashboard.css" | "dashboard.js";

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const asset = (body: string, contentType: string): DashAsset => ({
  body,
  contentType,
  hash: createHash("sha256").update(body).digest("hex").slice(0, 16),
});

let loaded: Record<DashAssetName, DashAsset> | undefined;

export function dashboardAsset(name: string): DashAsset | undefined {
  loaded ??= {
    "dashboard.css": asset(readFileSync(here("./dashboard.css"), "utf8"), "text/css; charset=utf-8"),
    "dashboard.js": asset(
      buildSync({
        entryPoints: [here("./client.ts")],
        bundle: true,
        write: false,
        format: "iife",
        platform: "browser",
        target: "es2019",
        minify: true,
        legalComments: "none",
        logLevel: "silent",
      }).outputFiles[0]!.text,
      "text/javascript; charset=utf-8",
    ),
  };
  return name === "dashboard.css" || name === "dashboard.js" ? loaded[name] : undefined;
}

export const assetUrl = (name: DashAssetName) => `/dashboard/assets/${name}?v=${dashboardAsset(name)!.hash}`;
