#!/usr/bin/env bash
# Seeds the fuzz corpora from ir_samples/: every .xml (with its .bin after the separator
# 0xFF "BIN", see fuzz_targets/common.rs) for the model targets, every .npy for the reader.
set -euo pipefail
cd "$(dirname "$0")"
mkdir -p corpus/load_check corpus/load_run corpus/npy
n=0
while IFS= read -r -d '' xml; do
    n=$((n + 1))
    out="corpus/load_check/sample_$n"
    bin="${xml%.xml}.bin"
    if [ -f "$bin" ]; then
        { cat "$xml"; printf '\377BIN'; cat "$bin"; } > "$out"
    else
        cp "$xml" "$out"
    fi
    cp "$out" "corpus/load_run/sample_$n"
done < <(find ../ir_samples -name '*.xml' -print0 | sort -z)
m=0
while IFS= read -r -d '' npy; do
    m=$((m + 1))
    cp "$npy" "corpus/npy/sample_$m"
done < <(find ../ir_samples -name '*.npy' -print0 | sort -z)
echo "seeded $n models and $m arrays"
