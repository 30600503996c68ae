// The addresses module's one door: other code imports only this file.
export { reassignAddress, registerAddress, watchedOwner, type WatchedKind } from "./registry.js";
export { watchedAddresses } from "./schema.js";
