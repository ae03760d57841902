#!/usr/bin/env bash
# Fuzz smoke test: run every fuzz target for N seconds (default 30).
#
#   fuzz/smoke.sh        # 30 s per target
#   fuzz/smoke.sh 300    # 5 min per target
#
# Skips (exit 0) when the nightly toolchain or cargo-fuzz is missing; exits
# non-zero when any target crashes (panic, failed property, stack overflow,
# timeout, out of memory). Crashing inputs land in fuzz/artifacts/<target>/.
set -uo pipefail

secs="${1:-30}"
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here"

if ! cargo +nightly --version >/dev/null 2>&1 || ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz smoke: nightly or cargo-fuzz not present, skipped"
    exit 0
fi

targets=(parse check stream compile repair_roundtrip unwrap pattern diff)

if ! cargo +nightly fuzz build; then
    echo "fuzz smoke: build failed" >&2
    exit 2
fi

failed=()
for t in "${targets[@]}"; do
    echo "fuzz smoke: $t for ${secs}s"
    # New inputs go to corpus/<t> (ignored by git); seeds/<t> is only read.
    mkdir -p "corpus/$t"
    if ! cargo +nightly fuzz run "$t" "corpus/$t" "seeds/$t" -- \
        -dict=json.dict -max_total_time="$secs" -max_len=65536 \
        -rss_limit_mb=2048 -timeout=10 -print_final_stats=1; then
        failed+=("$t")
    fi
done

if [ "${#failed[@]}" -ne 0 ]; then
    echo "fuzz smoke: FAILED: ${failed[*]} (inputs in fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz smoke: ${#targets[@]} targets ran ${secs}s each, no crash"
