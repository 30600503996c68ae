-- Rate-limit buckets are taken on every API request: as an unlogged table they skip the WAL, so a take never waits
-- for a WAL flush. After a Postgres crash (or on a promoted standby) the table is empty: every bucket starts full,
-- which costs at most one extra burst per bucket. Login throttling (login_attempts) stays logged.
ALTER TABLE "rate_limit_buckets" SET UNLOGGED;
