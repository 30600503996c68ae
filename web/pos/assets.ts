import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * The POS page's stylesheet and script, served by the app itself (no CDN): pos.css as written, client.ts bundled
 * with esbuild (with texts.ts) once per process, on first use. URLs carry the content hash (`?v=`).
 */
export type PosAsset = { body: string; contentType: string; hash: string };
export type PosAssets = { "pos.css": PosAsset; "pos.js": PosAsset };

// Beside this module, whatever the working directory.
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const asset = (body: string, contentType: string): PosAsset => ({
  body,
  contentType,
  hash: createHash("sha256").update(body).digest("hex").slice(0, 16),
});

async function bundleClient(): Promise<string> {
  const out = await build({
    entryPoints: [here("./client.ts")],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2019",
    minify: true,
    legalComments: "none",
    logLevel: "silent",
  });
  return out.outputFiles[0]!.text;
}

async function load(): Promise<PosAssets> {
  const [css, js] = await Promise.all([readFile(here("./pos.css"), "utf8"), bundleClient()]);
  return { "pos.css": asset(css, "text/css; charset=utf-8"), "pos.js": asset(js, "text/javascript; charset=utf-8") };
}

let loading: Promise<PosAssets> | undefined;

/** Built once and kept; a failed build is tried again on the next request. */
export function posAssets(): Promise<PosAssets> {
  loading ??= load().catch((err) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** The page's asset URLs, under their content hash. */
export const posAssetUrls = (a: PosAssets) => ({
  css: `/pos/assets/pos.css?v=${a["pos.css"].hash}`,
  js: `/pos/assets/pos.js?v=${a["pos.js"].hash}`,
});
export type PosAssetUrls = ReturnType<typeof posAssetUrls>;
