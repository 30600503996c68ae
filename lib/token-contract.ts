import { erc20Abi, type Address, type PublicClient } from "viem";

/** Reads an ERC-20's name, symbol and decimals; throws when the address is no ERC-20 contract. */
export async function readTokenContract(client: PublicClient, address: Address) {
  const code = await client.getCode({ address });
  if (!code || code === "0x") throw new Error("no contract at address");
  const [name, symbol, decimals] = await Promise.all([
    client.readContract({ address, abi: erc20Abi, functionName: "name" }).catch(() => null),
    client.readContract({ address, abi: erc20Abi, functionName: "symbol" }).catch(() => null),
    client.readContract({ address, abi: erc20Abi, functionName: "decimals" }),
  ]);
  return { name, symbol, decimals: Number(decimals) };
}
