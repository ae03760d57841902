#!/usr/bin/env bash
# Regenerate fuzz/seeds/ (the committed seed corpora) from the shared test
# suites and the repo's examples.
#
#   fuzz/seed.sh                 # shared/ is found beside the repo (../shared)
#   VOUCH_SHARED=/path/to/shared fuzz/seed.sh
#
# Needs jq. Seeds are kept small: files over 64 KiB (the fuzz -max_len) are
# skipped, so the whole of seeds/ stays well under 2 MB.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
shared="${VOUCH_SHARED:-$repo/../shared}"
parsing="$shared/suites/json-test-suite/test_parsing"
schemas="$shared/suites/json-schema-test-suite/tests"
bench="$shared/bench/contracts"
max=65536

for dir in "$parsing" "$schemas"; do
    [ -d "$dir" ] || { echo "seed.sh: $dir not found (set VOUCH_SHARED)" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "seed.sh: jq is needed" >&2; exit 1; }

seeds="$here/seeds"
rm -rf "$seeds"
mkdir -p "$seeds"/{parse,check,compile,repair_roundtrip,pattern}

small() { [ "$(wc -c <"$1")" -le "$max" ]; }

# JSONTestSuite y_ (must accept), n_ (must refuse), i_ (either): parse, check.
for f in "$parsing"/[yni]_*.json; do
    small "$f" || continue
    cp "$f" "$seeds/parse/jts_$(basename "$f")"
    cp "$f" "$seeds/check/jts_$(basename "$f")"
done

# Example replies (fenced, prose, truncated, repaired ...): check, repair_roundtrip.
while IFS= read -r f; do
    rel="${f#"$repo/examples/replies/"}"
    name="ex_${rel//\//_}"
    cp "$f" "$seeds/check/$name"
    cp "$f" "$seeds/repair_roundtrip/$name"
done < <(find "$repo/examples/replies" -type f ! -name expect.json | sort)

# Hand-made replies that the generated contracts in fuzz_targets/check.rs
# accept, some only after repairs, so the fuzzer starts inside them.
w() { printf '%s' "$2" >"$seeds/$1"; }
w check/gen_order_valid.json '{"id":"AB-1234","status":"open","priority":3,"ratio":0.5,"flag":true,"title":"Fix it","tags":["a","b"],"point":[1.5,2],"lines":[{"sku":"12","qty":2}],"meta":{"created":"2024-01-02T03:04:05Z","owner":null,"x-note":"hi"}}'
w check/gen_order_repairs.md $'Sure! Here it is:\n```json\n{"id":"ZZ-000","status":" Closed ","priority":"7.6","ratio":"0.25","flag":"true","title":"  a title that is far too long  ","tags":["ok",1,"NO","ok2"],"point":[0,0],"lines":[{"sku":"1","qty":0,"extra":1},{"qty":"x"}],"meta":{"bogus":1},"unknown":true}\n```\nHope that helps.'
w check/gen_tree_valid.json '{"root":{"name":"r","kind":"branch","value":1,"children":[{"name":"a","kind":"leaf","value":"s"},{"name":"b","kind":"branch","value":null,"children":[{"name":"c"}]}]},"version":1}'
w check/gen_tree_fenced.md $'```\n{"root":{"name":"x","kind":"leaf"}}\n```'
w check/gen_mixed_prose.txt $'The list is [1, 2.5, " padded ", {"a": "yes", "b": false}, [1, "1", true, null], null, 150, "far too long a string"] as requested.'
w check/gen_any_prose.txt 'Answer: {"a":[1,{"b":null}],"c":"\u00e9\ud83d\ude00"} -- done'
w repair_roundtrip/gen_elig_repairs.md $'<think>hmm</think>\n```json\n{"verdict":"eligible","matchScore":"142.7","summary":"  ok  ","criteria":[{"criterion":"age","status":"pass","reason":7}],"recommendations":["a",1,null,"b"]}\n```'
w repair_roundtrip/gen_elig_defaults.json '{"verdict":"maybe","matchScore":-3,"summary":"x","criteria":[],"recommendations":"none"}'
w repair_roundtrip/gen_elig_float.txt 'Result: {"verdict":"not_eligible","matchScore":99.5,"summary":"\tfine\n","criteria":[{"criterion":"c","status":"unknown","reason":""}],"recommendations":[]}'

# Unwrap (fuzz_targets/unwrap.rs): the review's two findings and each rule of
# crates/vouch/src/read/unwrap.rs, plus the example replies above.
mkdir -p "$seeds/unwrap"
find "$seeds/check" -name 'ex_*' -exec cp {} "$seeds/unwrap/" \;
w unwrap/review_inner_candidate.txt 'I first considered [{"verdict": "not_eligible"}, …] but my answer is {"verdict": "eligible"}'
w unwrap/review_fence_space.md $'``` json\n{"verdict": "eligible"}\n```'
w unwrap/fence_crlf.md $'```JSON \r\n{"verdict": "eligible", "score": 3}\r\n```  \n'
w unwrap/fence_tilde.md $'~~~jsonc\n{"verdict": "eligible"}\n~~~'
w unwrap/fence_python.md $'```python\n{"verdict": "eligible"}\n```'
w unwrap/fence_in_prose.md $'Here is the answer:\n```json\n{"verdict": "eligible"}\n```\nand {"verdict": "not_eligible"}'
w unwrap/prose_links.txt 'See [the docs](https://x.y/z)[^1] and [1]. - [x] done. {"verdict": "eligible"}'
w unwrap/quotes_code.txt 'the model said "{\"verdict\": \"eligible\"}" then `{"verdict": "eligible"}`'
w unwrap/think.txt '<think>{"verdict": "not_eligible"} [1, {</think>The answer: {"verdict": "eligible", "score": 1}.'
w unwrap/think_unclosed.txt '{"verdict": "eligible"} <think>{"verdict": "not_eligible"}'
w unwrap/truncated.txt 'Answer: {"verdict": "eligible", "score": '
w unwrap/hostile.txt '[[[[[[[[[[[[x [[[[[[[[[[[[x {"verdict": "eligible"}'
w unwrap/broken_beside.txt 'No: {"verdict": "eligible",} Yes: [{"verdict": "eligible"}]'

# Contract documents: one file per JSON-Schema-Test-Suite schema, plus the
# example and bench contracts (with x-vouch policies).
for f in "$schemas"/*.json; do
    base="$(basename "$f" .json)"
    i=0
    while IFS= read -r schema; do
        printf '%s\n' "$schema" >"$seeds/compile/jsts_${base}_$i.json"
        i=$((i + 1))
    done < <(jq -c '.[].schema' "$f")
done
for f in "$repo"/examples/contracts/*.json; do
    cp "$f" "$seeds/compile/ex_$(basename "$f")"
done
if [ -d "$bench" ]; then
    for f in "$bench"/*.json; do
        small "$f" && cp "$f" "$seeds/compile/bench_$(basename "$f")"
    done
fi

# Patterns: the pattern, a 0xFF byte, the haystack (fuzz_targets/pattern.rs).
p() { printf '%s\xff%s' "$2" "$3" >"$seeds/pattern/$1"; }
p class_ops '^[^a&&b]$' 'a'
p class_minus '^[^\w--\d]$' '5'
p space '^\s+$' $' \t\u00a0\u2028\ufeff'
p not_space '^\S$' $'\u0085'
p dot '^.{2}$' $'a\U0001F600'
p escapes '^\cJ\x41\u0042\u{43}\uD83D\uDE00\0$' $'\nABC\U0001F600\x00'
p classes '[\d-]|[^\W_]|[\b]|[]|[^]' 'x-'
p property '^\p{L}\P{Nd}\p{gc=Zs}\p{White_Space}$' $'\u00e9a \t'
p quantifiers '^(?:a{2,3}?|b+|c*?)(?<n>d)?$' 'aab'
p boundary '\bfoo\B' 'foox'
p lone_surrogate '\uD83D?x' 'x'
p refused '(a)\1|(?=x)|\k<n>|(?i:a)|\A|a++' 'aa'

for t in parse check compile repair_roundtrip unwrap pattern; do
    printf 'seeds/%-17s %4d files\n' "$t" "$(find "$seeds/$t" -type f | wc -l)"
done
du -sh "$seeds"
