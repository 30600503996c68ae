// Lint: the layers of DESIGN.md ("imports flow down only") and TypeScript's recommended rules.
// api | web | processors | cli  ->  modules  ->  core | db | chains | abis
import js from "@eslint/js";
import boundaries from "eslint-plugin-boundaries";
import tseslint from "typescript-eslint";

const FOUNDATION = ["core", "db", "chains", "abis"];
const layer = (from, to) => ({ from: { element: { type: from } }, allow: { to: { element: { types: { anyOf: to } } } } });

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
        ...["core", "db", "chains", "abis", "modules", "processors", "api", "web", "cli", "local"].map((type) => ({ type, pattern: type })),
        { type: "indexer", pattern: "src" },
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
          message: "{{from.type}} may not import {{to.type}}: imports flow down only (DESIGN.md, Layout)",
          policies: [
            layer("core", FOUNDATION),
            layer("db", FOUNDATION),
            layer("chains", FOUNDATION),
            layer("abis", ["abis"]),
            layer("modules", ["modules", ...FOUNDATION]),
            layer("processors", ["processors", "modules", ...FOUNDATION]),
            layer("api", ["api", "web", "modules", ...FOUNDATION]),
            layer("web", ["web", "modules", ...FOUNDATION]),
            layer("cli", ["cli", "local", "modules", ...FOUNDATION]),
            layer("local", ["local", "modules", ...FOUNDATION]),
            layer("indexer", ["indexer", "chains", "abis"]),
            layer("entry", ["entry", "api", "web", "processors", "cli", "local", "indexer", "modules", ...FOUNDATION]),
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
