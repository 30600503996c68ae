import fs from "node:fs";
import path from "node:path";
import { activeChains, type ActiveChain } from "../../chains/runtime.js";
import { DATA_DIR, readStackInfo } from "../../local/stack-info.js";

// Where the sandbox commands (listen, trigger, resend) find the service, the merchant's key and the chains: flags
// first, then the environment, then what the running local stack (`npm start`) publishes in .data/.

export class SandboxUsageError extends Error {}

/** The API the sandbox talks to, as an integrator's code would: over HTTP with an API key. */
export type Target = { apiUrl: string; apiKey: string };

const readIfExists = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined);

/** `--api-url` | CHAINPAY_API_URL | the local stack's; `--api-key` | CHAINPAY_API_KEY | the local demo merchant's key. */
export function targetOf(flags: { "api-url"?: string; "api-key"?: string }, env: NodeJS.ProcessEnv = process.env): Target {
  const apiUrl = flags["api-url"] ?? env.CHAINPAY_API_URL ?? readStackInfo()?.apiUrl;
  if (!apiUrl) throw new SandboxUsageError("No API to talk to: pass --api-url (or set CHAINPAY_API_URL), or run `npm start`.");
  const apiKey = flags["api-key"] ?? env.CHAINPAY_API_KEY ?? readIfExists(path.join(DATA_DIR, "demo-api-key"));
  if (!apiKey) throw new SandboxUsageError("No API key: pass --api-key (or set CHAINPAY_API_KEY).");
  return { apiUrl: apiUrl.replace(/\/+$/, ""), apiKey };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${typeof body === "string" ? body : JSON.stringify(body)}`);
  }
}

/** One JSON request to the API with the key (and `headers`); a non-2xx answer throws ApiError. */
export async function callApi<T>(
  t: Target,
  method: string,
  pathAndQuery: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await fetch(t.apiUrl + pathAndQuery, {
    method,
    headers: { ...headers, "x-api-key": t.apiKey, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  if (!res.ok) throw new ApiError(res.status, parsed, `${method} ${pathAndQuery}`);
  return parsed as T;
}

/** The chains with an RPC (RPC_URL_<id>, else the local stack's) and the local deployments file. */
export function sandboxChains(env: NodeJS.ProcessEnv = process.env): ActiveChain[] {
  const merged: Record<string, string | undefined> = { ...env };
  for (const c of readStackInfo()?.chains ?? []) merged[`RPC_URL_${c.chainId}`] ??= c.rpcUrl;
  merged.DEPLOYMENTS_FILE ??= path.join(DATA_DIR, "deployments.json");
  return activeChains(merged);
}

/** The database (DATABASE_URL, else the local stack's) and SECRET_KEY (else the local stack's key file), when known. */
export function databaseOf(env: NodeJS.ProcessEnv = process.env) {
  const url = env.DATABASE_URL ?? readStackInfo()?.databaseUrl;
  if (!url) return undefined;
  const config = {
    SECRET_KEY: env.SECRET_KEY ?? readIfExists(path.join(DATA_DIR, "secret-key")),
    SECRET_KEY_PREVIOUS: env.SECRET_KEY_PREVIOUS,
  };
  return { url, config };
}
