// The fingerprint of web/'s sources, written into the build so a test can tell a stale build.
//
// Rule (docs/web.md repeats it for the Python test): take the files under web/src plus
// index.html, package.json, package-lock.json, tsconfig.json and vite.config.ts; name each by
// its path relative to web/ with "/" separators; sort the names by their UTF-8 bytes; then
// sha256 over, for each file in order, `name + "\n" + sha256hex(file bytes) + "\n"`.
//
// `node scripts/source-hash.mjs` prints the hash; `--write` also writes static/build-info.json.
import { createHash } from "node:crypto";
import { readFileSync, readdirSync, writeFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

const web = fileURLToPath(new URL("..", import.meta.url));
const ROOT_FILES = ["index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts"];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

export function sourceFiles() {
  const names = [...ROOT_FILES, ...walk(join(web, "src")).map((p) => relative(web, p).split(sep).join("/"))];
  return names.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

export function sourceHash() {
  const total = createHash("sha256");
  for (const name of sourceFiles()) {
    const digest = createHash("sha256").update(readFileSync(join(web, name))).digest("hex");
    total.update(`${name}\n${digest}\n`);
  }
  return total.digest("hex");
}

const hash = sourceHash();
if (process.argv.includes("--write")) {
  const info = { source_sha256: hash, files: sourceFiles().length, rule: "see docs/web.md (Build fingerprint)" };
  writeFileSync(join(web, "../src/orecast/service/static/build-info.json"), JSON.stringify(info, null, 2) + "\n");
}
console.log(hash);
