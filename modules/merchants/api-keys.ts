import { createHash, randomBytes } from "node:crypto";

/** API keys are `cp_live_` + 32 random bytes (base64url); only their SHA-256 is stored. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `cp_live_${randomBytes(32).toString("base64url")}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}
