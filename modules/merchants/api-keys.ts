import { createHash, randomBytes } from "node:crypto";

// Bearer secrets (API keys, dashboard session tokens): 32 random bytes, of which only the SHA-256 is stored.

export const newToken = () => randomBytes(32).toString("base64url");
export const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** API keys are `cp_live_` + a new token. */
export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const key = `cp_live_${newToken()}`;
  return { key, prefix: key.slice(0, 12), hash: hashApiKey(key) };
}

export const hashApiKey = hashToken;
