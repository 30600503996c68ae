import { execFile } from "node:child_process";
import fs from "node:fs";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Debian's headless-capable Chromium, driven by playwright-core (Playwright's own download is not reachable here). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/**
 * Installs Debian's `chromium` package when it is missing (the browser tests need it; `npm test` on a fresh machine
 * must not need a manual step). Needs root and apt; otherwise fails with what to do, never skips the browser tests.
 */
export async function ensureChromium(): Promise<string> {
  if (fs.existsSync(CHROMIUM)) return CHROMIUM;
  if (process.getuid?.() !== 0)
    throw new Error(
      `Chromium not found at ${CHROMIUM}: install Debian's chromium package (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  const t0 = Date.now();
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  await run("apt-get", ["update", "-qq"], { env, maxBuffer: 64 << 20 });
  await run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "chromium"], { env, maxBuffer: 64 << 20 });
  if (!fs.existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} does not exist`);
  console.log(`[global-setup] installed chromium in ${Date.now() - t0} ms`);
  return CHROMIUM;
}
