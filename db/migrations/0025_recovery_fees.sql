-- Recoveries of unexpected funds are charged as a payment would be (docs/unexpected-funds.md, "Fees"): a registry
-- token with a price pays its fee in kind out of the sweep (fee_units); any other token's processing fee and gas are
-- debited from the Gas Tank when the sweep is signed (gas_tank_fee_micros, ledger entry `recovery-fee:<id>`).
ALTER TABLE "fund_recoveries" ADD COLUMN "fee_units" numeric(78, 0);--> statement-breakpoint
ALTER TABLE "fund_recoveries" ADD COLUMN "gas_tank_fee_micros" numeric(78, 0);
