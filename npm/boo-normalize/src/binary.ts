// Finds the boo-normalize executable: $BOO_NORMALIZE_BINARY, else the platform package that
// npm installed from this package's optionalDependencies (the esbuild/biome layout).
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { BinaryNotFoundError } from "./errors.js";

const require = createRequire(import.meta.url);

/** This package's version; platform packages carry the same one. */
export const VERSION: string = require("../package.json").version;

/** The platform packages published with this version, by `platform-arch[-libc]`. */
export const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  "darwin-arm64": "@boo-normalize/darwin-arm64",
  "darwin-x64": "@boo-normalize/darwin-x64",
  "linux-arm64-gnu": "@boo-normalize/linux-arm64-gnu",
  "linux-arm64-musl": "@boo-normalize/linux-arm64-musl",
  "linux-x64-gnu": "@boo-normalize/linux-x64-gnu",
  "linux-x64-musl": "@boo-normalize/linux-x64-musl",
};

let libc: "gnu" | "musl" | undefined;

/** `gnu` or `musl` on Linux (from the C library node itself runs on), else undefined. */
export function detectLibc(platform: string = process.platform): "gnu" | "musl" | undefined {
  if (platform !== "linux") return undefined;
  if (!libc) {
    // Node's diagnostic report names the glibc it runs on; musl builds have none.
    const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
    libc = report?.header?.glibcVersionRuntime ? "gnu" : "musl";
  }
  return libc;
}

/** The key of PLATFORM_PACKAGES for a platform (default: this one). */
export function platformKey(
  platform: string = process.platform,
  arch: string = process.arch,
  libc: string | undefined = detectLibc(platform),
): string {
  return libc ? `${platform}-${arch}-${libc}` : `${platform}-${arch}`;
}

/**
 * Absolute path of the boo-normalize executable. Throws BinaryNotFoundError naming the
 * platform package that is missing, or saying that none exists for this platform.
 */
export function binaryPath(): string {
  const override = process.env.BOO_NORMALIZE_BINARY;
  if (override) {
    try {
      accessSync(override, constants.X_OK);
    } catch (err) {
      throw new BinaryNotFoundError(
        `boo-normalize: BOO_NORMALIZE_BINARY=${override}: ${(err as Error).message}`,
      );
    }
    return override;
  }
  const key = platformKey();
  const pkg = PLATFORM_PACKAGES[key];
  if (!pkg) {
    throw new BinaryNotFoundError(
      `boo-normalize: no prebuilt binary for ${key} (there are: ${Object.keys(PLATFORM_PACKAGES).join(", ")}); ` +
        "build one with `cargo install boo-normalize` and set BOO_NORMALIZE_BINARY to its path",
    );
  }
  try {
    return require.resolve(`${pkg}/bin/boo-normalize`);
  } catch {
    throw new BinaryNotFoundError(
      `boo-normalize: the platform package ${pkg} is not installed: npm skips optional ` +
        `dependencies with --omit=optional or --no-optional, and when a lockfile was made on another platform; ` +
        `install it with \`npm install ${pkg}@${VERSION}\` (or set BOO_NORMALIZE_BINARY to a boo-normalize binary)`,
      pkg,
    );
  }
}
