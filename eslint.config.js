// Lint: the layers of DESIGN.md ("imports flow down only") and TypeScript's recommended rules.
// app (builds AppDeps, checks roles) | api | web | processors | cli  ->  flows  ->  modules  ->  db | chains  ->  core
// (core may name db and chains types only: AppDeps)
// Inside modules/: each module is imported only through its index.ts, and only by the modules above it in
// MODULE_ORDER (docs/modules.md).
import js from "@eslint/js";
import boundaries from "eslint-plugin-boundaries";
import tseslint from "typescript-eslint";

const FOUNDATION = ["core", "db", "chains", "abis"];
/**
 * The modules, lowest first: a module may import only those before it (so no cycle between modules). A module that
 * needs something of one above it declares the shape it needs and is handed it by a flow (flows/).
 */
const MODULE_ORDER = [
  "addresses",
  "pricing",
  "merchants",
  "events",
  "webhooks",
  "idempotency",
  "agents",
  "gas-tank",
  "terminals",
  "bridge",
  "payments",
  "vault",
  "sanctions",
  "settlement",
  "indexing",
  "metrics",
];
const moduleOrder = MODULE_ORDER.map((name, i) => ({
  from: { element: { types: "modules", captured: { name } } },
  allow: {
    to: {
      element: {
        types: "modules",
        captured: { name: MODULE_ORDER.slice(0, i) },
        fileInternalPath: "index.ts",
      },
    },
  },
}));

// Any layer that may use modules reaches each one through its door only.
const DOOR = { types: "modules", fileInternalPath: "index.ts" };
const layer = (from, to) => ({
  from: { element: { type: from } },
  allow: { to: { element: [{ types: { anyOf: to.filter((t) => t !== "modules") } }, ...(to.includes("modules") ? [DOOR] : [])] } },
});

export default tseslint.config(
  {
    ignores: [
      "node_modules/**",
      ".data/**",
      ".ponder/**",
      ".scratch/**",
      "generated/**",
      "coverage/**",
      "test/output/**",
      "**/*.js",
      "!eslint.config.js",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.tsx"],
    plugins: { boundaries },
    settings: {
      "import/resolver": { "./scripts/eslint-ts-resolver.cjs": {} },
      "boundaries/include": ["**/*.ts", "**/*.tsx"],
      "boundaries/elements": [
        ...["core", "db", "chains", "abis", "flows", "processors", "api", "web", "cli", "local", "app"].map((type) => ({
          type,
          pattern: type,
          partialMatch: false,
        })),
        { type: "modules", pattern: "modules/*", capture: ["name"], partialMatch: false },
        { type: "indexer", pattern: "src", partialMatch: false },
        ...["scripts", "bench", "test", "types"].map((type) => ({ type: "entry", pattern: type })),
      ],
      // The indexer's design card and tool configs at the root import only chains/ and abis/.
      "boundaries/ignore": ["*.ts"],
    },
    rules: {
      "boundaries/dependencies": [
        2,
        {
          default: "disallow",
          message:
            "{{from.type}} {{from.captured.name}} may not import {{to.type}} {{to.captured.name}} {{to.fileInternalPath}}: imports flow down only, and a module only through its index.ts in MODULE_ORDER (docs/modules.md)",
          policies: [
            layer("core", ["core"]),
            // AppDeps (core/deps.ts) names the database and chain clients' types; core runs no code of theirs.
            { from: { element: { types: "core" } }, allow: { to: { element: { types: ["db", "chains"] } }, dependency: { kind: "type" } } },
            layer("db", FOUNDATION),
            layer("chains", FOUNDATION),
            layer("abis", ["abis"]),
            layer("modules", FOUNDATION),
            ...moduleOrder,
            // A foreign key names another module's table: schema files (declarations, no code) may import each other.
            {
              from: { element: { types: "modules", fileInternalPath: "schema.ts" } },
              allow: { to: { element: { types: "modules", fileInternalPath: "schema.ts" } } },
            },
            layer("flows", ["flows", "modules", ...FOUNDATION]),
            layer("processors", ["processors", "flows", "modules", ...FOUNDATION]),
            layer("api", ["api", "web", "flows", "modules", ...FOUNDATION]),
            layer("web", ["web", "flows", "modules", ...FOUNDATION]),
            layer("cli", ["cli", "local", "flows", "modules", ...FOUNDATION]),
            layer("local", ["local", "modules", ...FOUNDATION]),
            layer("indexer", ["indexer", "chains", "abis"]),
            layer("app", ["app", "api", "web", "processors", "flows", "modules", ...FOUNDATION]),
            layer("entry", ["entry", "app", "api", "web", "processors", "cli", "local", "indexer", "flows", "modules", ...FOUNDATION]),
          ],
        },
      ],
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none", ignoreRestSiblings: true },
      ],
      "no-empty": ["error", { allowEmptyCatch: true }],
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-explicit-any": "error",
    },
  },
  {
    // A status changes only in its table's transition() (modules/<m>/transition.ts, db/status-machine.ts), which
    // writes the audit row with it.
    files: ["modules/**/*.ts", "flows/**/*.ts", "processors/**/*.ts", "api/**/*.ts", "web/**/*.tsx", "cli/**/*.ts"],
    ignores: ["**/transition.ts", "modules/payments/state-machine.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "CallExpression[callee.property.name='set'][callee.object.callee.property.name='update'] > ObjectExpression > Property[key.name='status']",
          message: "A status changes only through its table's transition() (db/status-machine.ts), which writes the audit row",
        },
        ...["TemplateElement[value.raw", "Literal[value"].map((node) => ({
          selector: `${node}=/UPDATE\\s[^;]*?\\bSET\\b(?:(?!\\bWHERE\\b)[^;])*\\bstatus\\s*=/i]`,
          message: "A status changes only through its table's transition() (db/status-machine.ts), which writes the audit row",
        })),
      ],
    },
  },
  {
    // The import resolver is loaded by require(): CommonJS.
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { require: "readonly", exports: "writable", module: "writable" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
  {
    // Tests, benchmarks and scripts handle untyped JSON of the API under test.
    files: ["test/**", "bench/**", "scripts/**", "local/**"],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
