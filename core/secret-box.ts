import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

// Secrets the service must read back (webhook signing keys) are stored sealed with AES-256-GCM under the
// server key SECRET_KEY, as text: `enc:v1:<key id>:<base64url(iv | tag | ciphertext)>`. The key id (8 hex
// characters, an HMAC of the key, so it tells nothing about it) says which key sealed a value: after a
// rotation the previous key still opens old values, and the rows not sealed with the current key are
// found by their prefix. A value without the `enc:` prefix is legacy plaintext and is returned as it is.

export const SEALED_PREFIX = "enc:";
const V1 = "enc:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export const SECRET_KEY_FORMAT = "32 bytes given as 64 hex characters or base64; make one with `openssl rand -hex 32`";

/** SECRET_KEY text -> the 32-byte key. Exactly 64 hex characters, or canonical base64/base64url of 32 bytes. Throws. */
export function parseSecretKey(text: string): Buffer {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, "hex");
  if (/^[A-Za-z0-9+/]{43}=?$/.test(t) || /^[A-Za-z0-9_-]{43}=?$/.test(t)) {
    const encoding = /[-_]/.test(t) ? "base64url" : "base64";
    const key = Buffer.from(t, encoding);
    // Re-encoding must give the input back: a stray low bit in the last character is not another key.
    if (key.length === 32 && key.toString(encoding).replace(/=+$/, "") === t.replace(/=+$/, "")) return key;
  }
  throw new Error(`must be ${SECRET_KEY_FORMAT}`);
}

export const keyId = (key: Buffer) => createHmac("sha256", key).update("chainpay secret-box key id").digest("hex").slice(0, 8);

export const isSealed = (stored: string) => stored.startsWith(SEALED_PREFIX);

export type SecretBox = {
  /** Key id of SECRET_KEY; null when no key is configured. */
  readonly keyId: string | null;
  /** Seals `plaintext`, bound to `context` (e.g. the column and row it is stored in: it opens only there). */
  seal(plaintext: string, context: string): string;
  /** The plaintext of a stored value: sealed values are opened with the key that sealed them, legacy plaintext is returned as is. */
  open(stored: string, context: string): string;
  /** True when `stored` is sealed with the current key (nothing to re-seal). */
  isCurrent(stored: string): boolean;
};

/**
 * A box over the current key and any previous ones (accepted for opening only). Without a current key,
 * sealing throws and only legacy plaintext opens: nothing is derived or defaulted.
 */
export function createSecretBox(keys: { current?: Buffer; previous?: Buffer[] }): SecretBox {
  const byId = new Map<string, Buffer>();
  for (const k of [...(keys.previous ?? []), ...(keys.current ? [keys.current] : [])]) {
    if (k.length !== 32) throw new Error("secret-box keys are 32 bytes");
    byId.set(keyId(k), k);
  }
  const currentId = keys.current ? keyId(keys.current) : null;
  return {
    keyId: currentId,
    seal(plaintext, context) {
      if (!keys.current || !currentId)
        throw new Error(`SECRET_KEY is not set: it encrypts webhook secrets at rest. It is ${SECRET_KEY_FORMAT}`);
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", keys.current, iv);
      cipher.setAAD(Buffer.from(context, "utf8"));
      const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return `${V1}${currentId}:${Buffer.concat([iv, cipher.getAuthTag(), ct]).toString("base64url")}`;
    },
    open(stored, context) {
      if (!isSealed(stored)) return stored;
      const m = /^enc:v1:([0-9a-f]{8}):([A-Za-z0-9_-]+)$/.exec(stored);
      if (!m) throw new Error("sealed value in an unknown format (expected enc:v1:<key id>:<data>)");
      const key = byId.get(m[1]!);
      if (!key) throw new Error(`sealed with key ${m[1]}, which is neither SECRET_KEY nor SECRET_KEY_PREVIOUS`);
      const raw = Buffer.from(m[2]!, "base64url");
      if (raw.length < IV_BYTES + TAG_BYTES) throw new Error("sealed value is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new Error("sealed value does not open: altered, or stored for another row");
      }
    },
    isCurrent: (stored) => currentId !== null && stored.startsWith(`${V1}${currentId}:`),
  };
}

const boxes = new Map<string, SecretBox>();

/** The box of a configuration (SECRET_KEY, SECRET_KEY_PREVIOUS: comma-separated), built once per distinct pair. */
export function secretBoxOf(config: { SECRET_KEY?: string; SECRET_KEY_PREVIOUS?: string }): SecretBox {
  const id = `${config.SECRET_KEY ?? ""}|${config.SECRET_KEY_PREVIOUS ?? ""}`;
  let box = boxes.get(id);
  if (!box) {
    const previous = (config.SECRET_KEY_PREVIOUS ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map(parseSecretKey);
    box = createSecretBox({ current: config.SECRET_KEY ? parseSecretKey(config.SECRET_KEY) : undefined, previous });
    boxes.set(id, box);
  }
  return box;
}
