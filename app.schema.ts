// Every table of the service, gathered for drizzle-kit (drizzle.config.ts) and the schema tests: the foundation's
// (db/schema.ts), the API's (api/schema.ts) and each module's own (modules/<m>/schema.ts). Code reads a module's
// tables through its index.ts, and writes only its own (db/table-owners.test.ts).
export * from "./db/schema.js";
export * from "./api/schema.js";
export * from "./modules/addresses/schema.js";
export * from "./modules/pricing/schema.js";
export * from "./modules/merchants/schema.js";
export * from "./modules/events/schema.js";
export * from "./modules/webhooks/schema.js";
export * from "./modules/idempotency/schema.js";
export * from "./modules/agents/schema.js";
export * from "./modules/gas-tank/schema.js";
export * from "./modules/terminals/schema.js";
export * from "./modules/bridge/schema.js";
export * from "./modules/payments/schema.js";
export * from "./modules/vault/schema.js";
export * from "./modules/sanctions/schema.js";
export * from "./modules/settlement/schema.js";
