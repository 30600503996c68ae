import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./app.schema.ts",
  out: "./db/migrations",
});
