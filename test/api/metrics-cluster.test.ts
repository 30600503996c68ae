import { spawnSync } from "node:child_process";
import path from "node:path";
import { expect, inject, it } from "vitest";

// API_WORKERS: whichever worker a scrape reaches, /metrics is the whole group's (the primary's registry and every
// worker's, added up), so Prometheus sees one steady target (fixtures/cluster-metrics.ts).

it("a scrape answered by any API worker counts the creations of every process of the group", () => {
  const env = { ...inject("stackEnv"), APP_SCHEMA: "app_cluster_metrics" };
  const child = spawnSync(process.execPath, ["--import", "tsx", path.resolve("test/api/fixtures/cluster-metrics.ts")], {
    env: { ...process.env, SERVICE_ENV: JSON.stringify(env), NODE_ENV: "test" },
    encoding: "utf8",
    timeout: 60_000,
  });
  expect(child.status, child.stderr).toBe(0);
  const { answers } = JSON.parse(child.stdout.trim().split("\n").pop()!) as {
    answers: { pid: string | null; created: number | null; status: number }[];
  };
  // primary 1 + worker 1: 10 + worker 2: 20
  for (const a of answers) expect(a).toMatchObject({ status: 200, created: 31 });
  expect(new Set(answers.map((a) => a.pid)).size).toBe(2);
});
