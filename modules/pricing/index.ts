// Prices: provider adapter, on-chain oracle, resolution order, token metadata. See each module's header.
export * from "./lossless-json.js";
export * from "./oracle.js";
export * from "./price-index.js";
export * from "./resolve.js";
export * from "./token-metadata.js";
