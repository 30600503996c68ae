// The indexing module's one door: other code imports only this file.
export { pruneSyncStore, TRANSFER_TOPIC } from "./prune-sync.js";
