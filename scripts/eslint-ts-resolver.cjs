// ESLint import resolver for this project's TypeScript: `./x.js` in an import names `./x.ts` (or `./x.tsx`)
// (moduleResolution "bundler"). Packages resolve as Node does. Used by eslint-plugin-boundaries.
const fs = require("node:fs");
const path = require("node:path");
const node = require("eslint-import-resolver-node");

exports.interfaceVersion = 2;
exports.resolve = (source, file, config) => {
  if (source.startsWith(".")) {
    const base = path.resolve(path.dirname(file), source);
    for (const candidate of [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base, `${base}.ts`, path.join(base, "index.ts")])
      if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return { found: true, path: candidate };
    return { found: false };
  }
  return node.resolve(source, file, config);
};
