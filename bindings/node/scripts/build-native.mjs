// The package's install script: builds the addon from source with cargo (release,
// into the repository's target/ unless CARGO_TARGET_DIR says otherwise) and puts it
// beside package.json as vouch.node. Needs only cargo and node: no npm packages.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, renameSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const repoTarget = join(pkg, "..", "..", "target");
const targetDir = resolve(process.env.CARGO_TARGET_DIR ?? (existsSync(join(pkg, "..", "..", "Cargo.toml")) ? repoTarget : join(pkg, "target")));
const cargo = process.env.CARGO ?? "cargo";

const built = spawnSync(cargo, ["build", "--release", "--manifest-path", join(pkg, "Cargo.toml"), "--target-dir", targetDir], {
  stdio: "inherit",
});
if (built.error || built.status !== 0) {
  console.error(
    `vouch: building the native addon failed (${built.error ? built.error.message : `cargo exited ${built.status}`}). ` +
      "It needs a Rust toolchain: https://rustup.rs, then npm install again.",
  );
  process.exit(1);
}
const file = { linux: "libvouch_node.so", darwin: "libvouch_node.dylib", win32: "vouch_node.dll" }[process.platform];
if (file === undefined) {
  console.error(`vouch: no native build for platform ${process.platform}`);
  process.exit(1);
}
// Copied then renamed: a process that has the old addon loaded keeps its file.
const tmp = join(pkg, `vouch.node.${process.pid}`);
copyFileSync(join(targetDir, "release", file), tmp);
renameSync(tmp, join(pkg, "vouch.node"));
