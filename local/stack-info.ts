import fs from "node:fs";
import path from "node:path";
import { isAlive } from "./child.js";

/** What the running local stack publishes for the CLI and scripts (.data/stack.json). */
export type StackInfo = {
  databaseUrl: string;
  apiUrl: string;
  ponderUrl: string;
  chains: { chainId: number; rpcUrl: string }[];
  pid: number;
};

export const DATA_DIR = path.resolve(process.env.CHAINPAY_DATA_DIR ?? ".data");
const file = () => path.join(DATA_DIR, "stack.json");

export function writeStackInfo(info: StackInfo) {
  fs.mkdirSync(DATA_DIR, { recursive: true });
  fs.writeFileSync(file(), JSON.stringify(info, null, 2));
}

export function readStackInfo(): StackInfo | undefined {
  if (!fs.existsSync(file())) return undefined;
  const info = JSON.parse(fs.readFileSync(file(), "utf8")) as StackInfo;
  return isAlive(info.pid) ? info : undefined;
}

export function removeStackInfo() {
  fs.rmSync(file(), { force: true });
}
