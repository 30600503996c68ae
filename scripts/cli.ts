// `npm run cli -- <command>`: the operator's commands (cli/index.ts). `doctor` checks the whole service's configuration
// (app/doctor.ts, as `npm run serve` does at start), so it runs from here, above the cli layer.
const [command] = process.argv.slice(2);
if (command === "doctor") {
  const { formatDoctor, runDoctor } = await import("../app/doctor.js");
  const checks = await runDoctor(process.env);
  console.log(formatDoctor(checks));
  process.exit(checks.some((c) => c.status === "fail") ? 1 : 0);
} else await import("../cli/index.js");
export {};
