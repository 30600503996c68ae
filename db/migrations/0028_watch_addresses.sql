-- The addresses module owns watched_addresses (modules/addresses). Statements of other modules that create addresses
-- in bulk (payment creation: one statement, one round trip) register them by calling this function, never by
-- writing the table. Returns how many it registered (an address already watched keeps its first owner).
CREATE FUNCTION "watch_addresses"("chain_ids" integer[], "addresses" text[], "kinds" text[], "owner_ids" text[], "merchant_ids" uuid[])
RETURNS bigint LANGUAGE sql VOLATILE AS $$
  WITH registered AS (
    INSERT INTO watched_addresses (chain_id, address, kind, owner_id, merchant_id)
    SELECT c, lower(a), k, o, m FROM unnest(chain_ids, addresses, kinds, owner_ids, merchant_ids) AS u(c, a, k, o, m)
    ON CONFLICT DO NOTHING
    RETURNING 1
  )
  SELECT count(*) FROM registered
$$;
