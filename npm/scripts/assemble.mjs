// Assembles the npm packages from a built binary and packs them:
//   boo-normalize                      the main package (launcher, TypeScript client, types)
//   @boo-normalize/<platform>          the binary for one platform (os/cpu/libc fields)
//
//   node scripts/assemble.mjs [--binary PATH] [--platform KEY] [--out DIR] [--no-build]
//
// --binary defaults to ../target/release/boo-normalize (`cargo build --release` first);
// --platform defaults to this machine's key (linux-x64-gnu, darwin-arm64, …): pass it with a
// binary cross-built for another platform (cargo build --release --target …). The binary is
// stripped of debug info. --out defaults to ../target/npm. Prints each tarball with its size.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const npmDir = resolve(here, "..");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const binary = resolve(opt("--binary", join(npmDir, "../target/release/boo-normalize")));
const out = resolve(opt("--out", join(npmDir, "../target/npm")));
const main = JSON.parse(readFileSync(join(npmDir, "boo-normalize/package.json"), "utf8"));

function fail(message) {
  console.error(`assemble: ${message}`);
  process.exit(1);
}

function localKey() {
  if (process.platform !== "linux") return `${process.platform}-${process.arch}`;
  const libc = process.report.getReport().header.glibcVersionRuntime ? "gnu" : "musl";
  return `${process.platform}-${process.arch}-${libc}`;
}

const key = opt("--platform", localKey());
const platformName = `@boo-normalize/${key}`;
if (!(platformName in (main.optionalDependencies ?? {}))) {
  fail(`${platformName} is not among boo-normalize's optionalDependencies (add it there first)`);
}
for (const [name, version] of Object.entries(main.optionalDependencies)) {
  if (version !== main.version) fail(`${name}@${version}: platform packages must be ${main.version}`);
}
try {
  statSync(binary);
} catch {
  fail(`${binary}: no binary (run \`cargo build --release\`, or pass --binary PATH)`);
}
if (key === localKey()) {
  const reported = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim();
  if (reported !== `boo-normalize ${main.version}`) {
    fail(`${binary} says "${reported}", the npm packages are ${main.version}: versions must match Cargo.toml`);
  }
}

if (!args.includes("--no-build")) {
  execFileSync(join(npmDir, "node_modules/.bin/tsc"), ["-p", join(npmDir, "boo-normalize/tsconfig.json")], {
    stdio: "inherit",
  });
}

rmSync(out, { recursive: true, force: true });
const mainOut = join(out, "boo-normalize");
const platOut = join(out, key);
mkdirSync(mainOut, { recursive: true });
mkdirSync(join(platOut, "bin"), { recursive: true });
for (const entry of ["package.json", "README.md", "bin", "dist"]) {
  cpSync(join(npmDir, "boo-normalize", entry), join(mainOut, entry), { recursive: true });
}

const [os, cpu, libc] = key.split("-");
const platformPackage = {
  name: platformName,
  version: main.version,
  description: `The boo-normalize binary for ${key} (installed by the boo-normalize package)`,
  license: main.license,
  os: [os],
  cpu: [cpu],
  ...(libc ? { libc: [libc === "gnu" ? "glibc" : libc] } : {}),
  files: ["bin/"],
  preferUnplugged: true,
};
writeFileSync(join(platOut, "package.json"), JSON.stringify(platformPackage, null, 2) + "\n");
writeFileSync(
  join(platOut, "README.md"),
  `# ${platformName}\n\nThe \`boo-normalize\` binary for ${key}. Install [boo-normalize](https://www.npmjs.com/package/boo-normalize) instead: it picks this package for you.\n`,
);
const exe = join(platOut, "bin/boo-normalize");
copyFileSync(binary, exe);
chmodSync(exe, 0o755);
try {
  execFileSync("strip", process.platform === "darwin" ? ["-x", exe] : ["--strip-debug", exe]);
} catch (err) {
  console.error(`assemble: strip failed (${err.message.split("\n")[0]}): the binary keeps its debug info`);
}

for (const dir of [platOut, mainOut]) {
  const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", out], {
    cwd: dir,
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop();
  console.log(`${join(out, tarball)}\t${statSync(join(out, tarball)).size}`);
}
