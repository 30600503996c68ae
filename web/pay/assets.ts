import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

/**
 * The payer page's stylesheet and script, served by the app itself (no CDN): pay.css as written,
 * client.ts bundled with esbuild (with texts.ts) once per process, on first use.
 */

export type Asset = { body: string; contentType: string; /** Content hash: the `?v=` of the page's asset URLs. */ hash: string };
export type PayAssets = { "pay.css": Asset; "pay.js": Asset };

// Beside this module, whatever the working directory.
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

const asset = (body: string, contentType: string): Asset => ({
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

async function load(): Promise<PayAssets> {
  const [css, js] = await Promise.all([readFile(here("./pay.css"), "utf8"), bundleClient()]);
  return { "pay.css": asset(css, "text/css; charset=utf-8"), "pay.js": asset(js, "text/javascript; charset=utf-8") };
}

let loading: Promise<PayAssets> | undefined;

/** Built once and kept; a failed build is tried again on the next request. */
export function payAssets(): Promise<PayAssets> {
  loading ??= load().catch((err) => {
    loading = undefined;
    throw err;
  });
  return loading;
}
