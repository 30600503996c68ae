// The pricing module's one door: other code imports only this file.
export { cachedGasPrice } from "./gas-price.js";
export { cachedL1Cost, type L1Cost, sampleSweepTx } from "./l1-fee.js";
export { oraclePrice, oraclePriceQuery, tokenMetadata, tokenMetadataQuery, tokenPrice, tokenPriceQuery } from "./lookups.js";
export { JsonNumber, parseJsonLossless } from "./lossless-json.js";
export {
  defaultOracleChain,
  normalizeOracleSymbol,
  oracleMaxAgeS,
  OracleUnavailableError,
  readOracleAt,
  readOraclePrice,
} from "./oracle.js";
export { NATIVE_COIN_IDS, PRICE_INDEX_PLATFORMS, PriceIndexClient, priceIndexFromConfig, priceIndexPlatform } from "./price-index.js";
export {
  lookupTokenPrice,
  parseCustomPriceUsd,
  type PriceSource,
  PriceUnavailableError,
  resolveNativePriceUsd,
  resolveTokenPriceUsd,
} from "./resolve.js";
export { isTransportError, readContractMetadata } from "./token-metadata.js";
export { storedTokenMetadata, storeTokenMetadata } from "./token-metadata-cache.js";
export { nativePriceStates, type NativePriceState } from "./states.js";
export { needsPush, pushedSymbols, pushOraclePrices, pushStates, pusherSourcePrice, type PushPass, type PushState } from "./pusher.js";
