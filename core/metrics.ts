import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

// Prometheus metrics of this process (prom-client), served by GET /metrics (api/routes/metrics.ts).
// Counters and histograms are per process and counted where things happen; the gauges of shared state
// (indexer lag, webhook queue, Gas Tank totals, signers' balances and runways) are read from the database and the chains
// when scraped (modules/metrics/gauges.ts). Names, labels and example PromQL: docs/observability.md.
// Labels are bounded: route patterns (never raw paths), chain ids, processor names, outcomes.

export const registry = new Registry();

let processMetrics = false;
/** Node's own metrics (CPU, memory, event-loop delay, GC), started by the first scrape, not by an import. */
export function collectProcessMetrics() {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry });
}

const registers = [registry];
const secondsBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Every API request by route pattern (`/api/payments/:id`), method and status. */
export const httpRequestDuration = new Histogram({
  name: "chainpay_http_request_duration_seconds",
  help: "API request latency by route pattern, method and status",
  labelNames: ["method", "route", "status"] as const,
  buckets: secondsBuckets,
  registers,
});

const paymentsCreated = new Counter({
  name: "chainpay_payments_created_total",
  help: "Payments created (REST and GraphQL), by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
const createdByChain = new Map<number, Counter.Internal>();
/** One payment created: a counter bound to its chain once, so the creation path pays one increment. */
export function countPaymentCreated(chainId: number) {
  let c = createdByChain.get(chainId);
  if (!c) createdByChain.set(chainId, (c = paymentsCreated.labels(String(chainId))));
  c.inc();
}

const paymentsPaid = new Counter({
  name: "chainpay_payments_paid_total",
  help: "Payments detected paid in full (pending or expired -> paid), by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
const detectionSeconds = new Histogram({
  name: "chainpay_payment_detection_seconds",
  help: "From the block of the deposit that completed a token payment to its paid status (includes its confirmations)",
  labelNames: ["chain_id"] as const,
  buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
  registers,
});
/**
 * A payment moved to paid at `nowMs`; `blockTimestamp` (seconds) is the completing deposit's block when known
 * (token payments; a native payment is read by balance, without a block time).
 */
export function observePaymentPaid(chainId: number, blockTimestamp: string | number | bigint | null | undefined, nowMs: number) {
  const chain = String(chainId);
  paymentsPaid.labels(chain).inc();
  if (blockTimestamp === null || blockTimestamp === undefined) return;
  detectionSeconds.labels(chain).observe(Math.max(0, nowMs / 1000 - Number(blockTimestamp)));
}

const batchFallbacks = new Counter({
  name: "chainpay_batch_fallbacks_total",
  help: "Batched statements that failed and ran again in parts (core/batcher.ts), by statement",
  labelNames: ["statement"] as const,
  registers,
});
const batchOverflows = new Counter({
  name: "chainpay_batch_overflows_total",
  help: "Calls refused with 503 because a batched statement's queue was full, by statement",
  labelNames: ["statement"] as const,
  registers,
});
export const countBatchFallback = (statement: string) => batchFallbacks.labels(statement).inc();
export const countBatchOverflow = (statement: string) => batchOverflows.labels(statement).inc();

const settlements = new Counter({
  name: "chainpay_settlements_total",
  help: "Settlement (sweep) transactions whose receipt was recorded, by chain and outcome (mined, reverted)",
  labelNames: ["chain_id", "outcome"] as const,
  registers,
});
const settlementGas = new Histogram({
  name: "chainpay_settlement_gas_used",
  help: "Gas used by a settlement transaction, by chain",
  labelNames: ["chain_id"] as const,
  buckets: [30e3, 45e3, 60e3, 90e3, 125e3, 250e3, 500e3, 1e6, 2.5e6, 5e6, 10e6, 30e6],
  registers,
});
const settlementBatch = new Histogram({
  name: "chainpay_settlement_batch_size",
  help: "Payments swept by one settlement transaction, by chain",
  labelNames: ["chain_id"] as const,
  buckets: [1, 2, 5, 10, 20, 50, 100, 200],
  registers,
});
/** A settlement transaction's receipt: its outcome, gas used and the number of payments it swept. */
export function observeSettlement(chainId: number, outcome: "mined" | "reverted", gasUsed: bigint | number | string, batchSize: number) {
  const chain = String(chainId);
  settlements.labels(chain, outcome).inc();
  settlementGas.labels(chain).observe(Number(gasUsed));
  settlementBatch.labels(chain).observe(batchSize);
}

const txReplacements = new Counter({
  name: "chainpay_tx_replacements_total",
  help: "Transactions signed again with the same nonce and higher fees (stuck under the base fee or for the chain's blocks)",
  labelNames: ["chain_id"] as const,
  registers,
});
const txAtFeeCap = new Counter({
  name: "chainpay_tx_fee_cap_waits_total",
  help: "Reconcile passes that found a pending transaction needing more than the chain's fee cap (it waits)",
  labelNames: ["chain_id"] as const,
  registers,
});
const txMineSeconds = new Histogram({
  name: "chainpay_tx_time_to_mine_seconds",
  help: "From the first signed version of a nonce to the receipt of the version that mined",
  labelNames: ["chain_id"] as const,
  buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
  registers,
});
const txFeeOverBase = new Histogram({
  name: "chainpay_tx_fee_over_base_ratio",
  help: "Effective gas price paid over the block's base fee, per mined transaction",
  labelNames: ["chain_id"] as const,
  buckets: [1, 1.01, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10],
  registers,
});
/** A transaction signed again with higher fees. */
export const observeTxReplacement = (chainId: number) => txReplacements.labels(String(chainId)).inc();
/** A pending transaction that the fee cap keeps from being replaced. */
export const observeTxAtFeeCap = (chainId: number) => txAtFeeCap.labels(String(chainId)).inc();
/** A nonce mined: seconds since its first version was signed, and the price paid over the base fee (ratios of wei: floats are fine here). */
export function observeTxMined(chainId: number, seconds: number, effectiveGasPrice: bigint, baseFee: bigint | null) {
  txMineSeconds.labels(String(chainId)).observe(seconds);
  if (baseFee) txFeeOverBase.labels(String(chainId)).observe(Number((effectiveGasPrice * 1000n) / baseFee) / 1000);
}

/** Webhook deliveries: success, retry (failed attempt, another scheduled), failed (no attempt left), skipped, lost, error. */
export const webhookDeliveries = new Counter({
  name: "chainpay_webhook_deliveries_total",
  help: "Webhook delivery attempts by kind (payment, vault) and outcome",
  labelNames: ["kind", "outcome"] as const,
  registers,
});
export const webhookAttemptDuration = new Histogram({
  name: "chainpay_webhook_attempt_duration_seconds",
  help: "Duration of webhook HTTP attempts, by kind",
  labelNames: ["kind"] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers,
});

/** Each pass of each processor loop (processors/runner.ts). */
export const processorPassDuration = new Histogram({
  name: "chainpay_processor_pass_duration_seconds",
  help: "Duration of processor passes, by processor",
  labelNames: ["processor"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers,
});
export const processorPassErrors = new Counter({
  name: "chainpay_processor_pass_errors_total",
  help: "Processor passes that threw, by processor",
  labelNames: ["processor"] as const,
  registers,
});
export const processorLastPass = new Gauge({
  name: "chainpay_processor_last_pass_timestamp_seconds",
  help: "Unix time the processor's last pass ended (successful or not)",
  labelNames: ["processor"] as const,
  registers,
});

// Gauges set at scrape time from shared state (modules/metrics/gauges.ts).
export const indexerBlock = new Gauge({
  name: "chainpay_indexer_block",
  help: "Latest block the indexer has committed, by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const chainHeadBlock = new Gauge({
  name: "chainpay_chain_head_block",
  help: "Latest block of the chain's RPC, by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const indexerLagBlocks = new Gauge({
  name: "chainpay_indexer_lag_blocks",
  help: "Blocks between the chain head and the indexer, by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const indexerLagSeconds = new Gauge({
  name: "chainpay_indexer_lag_seconds",
  help: "Chain time between the head block and the indexed block, by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const webhookQueueDue = new Gauge({
  name: "chainpay_webhook_queue_due",
  help: "Webhook deliveries due now and not claimed (the outbox backlog)",
  registers,
});
export const webhookQueuePending = new Gauge({
  name: "chainpay_webhook_queue_pending",
  help: "Webhook deliveries not finished: due, claimed (in flight) or waiting for a retry",
  registers,
});
export const webhookQueueOldestDue = new Gauge({
  name: "chainpay_webhook_queue_oldest_due_seconds",
  help: "How long the oldest due, unclaimed webhook delivery has waited (0 when none)",
  registers,
});
export const gasTankBalanceMicros = new Gauge({
  name: "chainpay_gas_tank_balance_micros",
  help: "Sum of all merchants' Gas Tank balances, in USDT micros (1e-6)",
  registers,
});
export const gasTankMerchants = new Gauge({
  name: "chainpay_gas_tank_merchants",
  help: "Merchants with a Gas Tank ledger, by balance sign (positive, zero, negative)",
  labelNames: ["balance"] as const,
  registers,
});
export const paymentsAwaitingGas = new Gauge({
  name: "chainpay_payments_awaiting_gas",
  help: "Paid gasless payments waiting for their merchant's Gas Tank to be funded",
  registers,
});
export const paymentsWithdrawRequests = new Gauge({
  name: "chainpay_payments_withdraw_requests",
  help: "Manual withdrawals requested by merchants that the settler has not signed yet (status withdraw_request)",
  registers,
});
export const withdrawRequestOldestSeconds = new Gauge({
  name: "chainpay_payments_withdraw_request_oldest_seconds",
  help: "How long the oldest withdraw_request has waited for the settler, in seconds (0 when none)",
  registers,
});
export const settlerBalance = new Gauge({
  name: "chainpay_settler_balance",
  help: "Native coin balance of the settler account (pays the gas of sweeps), in whole coins, by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const signerBalanceWei = new Gauge({
  name: "chainpay_signer_balance_wei",
  help: "Native balance of each account the service sends transactions from (settler, agent payout wallet, bridge authority), in wei, by chain and signer",
  labelNames: ["chain_id", "signer"] as const,
  registers,
});
// No spend in the window is +Inf ("lasts indefinitely"), not an absent series: `chainpay_signer_runway_blocks < 1000`
// stays false for an idle signer, an alert on it resolves rather than going stale when spending stops, and absent()
// still means "not scraped". Left out only where the spend is unknown (a signer whose gas is not recorded).
export const signerRunwayBlocks = new Gauge({
  name: "chainpay_signer_runway_blocks",
  help: "Blocks the signer's native balance pays for at its last hour's gas spending (settlements and Vault sweeps), by chain and signer; +Inf when it spent nothing",
  labelNames: ["chain_id", "signer"] as const,
  registers,
});
export const settlementOldestUnsettled = new Gauge({
  name: "chainpay_settlement_oldest_unsettled_seconds",
  help: "Age of the oldest paid payment not yet settled (awaiting gas excluded), by chain; 0 when none",
  labelNames: ["chain_id"] as const,
  registers,
});
export const txOldestPending = new Gauge({
  name: "chainpay_tx_oldest_pending_seconds",
  help: "Age of the oldest transaction our signers signed that has not mined (any version), by chain; 0 when none",
  labelNames: ["chain_id"] as const,
  registers,
});
export const txAtFeeCapNow = new Gauge({
  name: "chainpay_tx_at_fee_cap",
  help: "1 when a pending transaction waits at the chain's fee cap (MAX_FEE_PER_GAS_GWEI_<chainId>), by chain",
  labelNames: ["chain_id"] as const,
  registers,
});
export const scrapeSourceUp = new Gauge({
  name: "chainpay_metrics_source_up",
  help: "1 when the scrape-time source (database, indexer, chain) answered at the last scrape, else 0",
  labelNames: ["source"] as const,
  registers,
});

// JSON-RPC providers (chains/rpc-pool.ts): `provider` is "<n>:<host[:port]>", never a path or key.
const rpcRequests = new Counter({
  name: "chainpay_rpc_requests_total",
  help: "JSON-RPC requests sent to a provider by this process, by chain and provider",
  labelNames: ["chain_id", "provider"] as const,
  registers,
});
const rpcErrors = new Counter({
  name: "chainpay_rpc_errors_total",
  help: "Provider faults by kind (rate_limited, server, timeout, network, wrong_chain, missing_block); the node's own answers (reverts) are not faults",
  labelNames: ["chain_id", "provider", "kind"] as const,
  registers,
});
const rpcSeconds = new Histogram({
  name: "chainpay_rpc_request_seconds",
  help: "JSON-RPC request latency by chain and provider, budget wait included",
  labelNames: ["chain_id", "provider"] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers,
});
/** One request to a provider (chains/rpc-pool.ts's observer). */
export function observeRpc(e: { chainId: number; provider: string; ms: number; fault: string | null }) {
  const chain = String(e.chainId);
  rpcRequests.labels(chain, e.provider).inc();
  rpcSeconds.labels(chain, e.provider).observe(e.ms / 1000);
  if (e.fault) rpcErrors.labels(chain, e.provider, e.fault).inc();
}
export const rpcHeadLag = new Gauge({
  name: "chainpay_rpc_head_lag_blocks",
  help: "Blocks a provider's head is behind the highest head of the chain's providers (as this process last read them)",
  labelNames: ["chain_id", "provider"] as const,
  registers,
});
export const rpcProviderState = new Gauge({
  name: "chainpay_rpc_provider_state",
  help: "1 for a provider's current state (ok, lagging, rate_limited, failing, wrong_chain), 0 for the others",
  labelNames: ["chain_id", "provider", "state"] as const,
  registers,
});
export const rpcProviderInUse = new Gauge({
  name: "chainpay_rpc_provider_in_use",
  help: "1 for the provider reads go to now (the first usable in RPC_URL_<chainId>'s order), 0 for the others",
  labelNames: ["chain_id", "provider"] as const,
  registers,
});

export const priceAge = new Gauge({
  name: "chainpay_price_age_seconds",
  help: "Age of each chain's native coin price as a quote would use it (since the feed's or PriceOracle's update, or the index read), by chain, symbol and source",
  labelNames: ["chain_id", "symbol", "source"] as const,
  registers,
});
export const priceAvailable = new Gauge({
  name: "chainpay_price_available",
  help: "1 when a chain's native coin has a usable price now, 0 when it is unavailable (stale feed, sequencer down, source failing) or unpriced",
  labelNames: ["chain_id", "symbol"] as const,
  registers,
});
export const pricePushLast = new Gauge({
  name: "chainpay_price_push_last_seconds",
  help: "Unix time of the price pusher's last mined setPrices on a chain's own PriceOracle (absent: never)",
  labelNames: ["chain_id"] as const,
  registers,
});
