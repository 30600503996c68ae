-- The promotion's slot check runs in every payment creation (modules/payments/promo.ts PROMO_SLOT_LEFT_SQL): without
-- this index it reads every payment of the merchant (44 ms at 100k payments); with it, at most the 30 slots.
CREATE INDEX "payments_promo_slots_idx" ON "payments" USING btree ("merchant_id") WHERE promo_applied AND status NOT IN ('expired', 'failed', 'cancelled', 'withdrawn');
