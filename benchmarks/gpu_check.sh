#!/usr/bin/env bash
# Everything a lent GPU machine is asked for, in one run of at most ~8.5 minutes (a lease is
# 15 minutes of device time, its start included): the benchmark's CUDA configuration (each
# part timed), the Triton kernel's tile sweep first, the GPU tests.
# Each part has its own time limit and writes its own files, so a part that runs long costs
# only itself. Results land in $OUT (benchmarks/results/gpu/<gpu>-<date>/ once committed).
#
#   OUT=/tmp/gpu COMMIT=$(git rev-parse HEAD) bash benchmarks/gpu_check.sh
set -u
out=${OUT:?set OUT to the folder for the results}
export PYTHONPATH=$PWD/src:$PWD${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1

part() {  # part NAME SECONDS COMMAND...: run it with a limit, log it, record rc and duration
    local name=$1 limit=$2 start=$SECONDS
    shift 2
    timeout "$limit" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc $((SECONDS - start))s (limit ${limit}s)" | tee -a "$out/parts.txt"
    tail -n 30 "$out/$name.log"
}

{
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    python3 -c 'import torch, triton, transformers, sys
print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda,
      "triton", triton.__version__, "transformers", transformers.__version__)'
    echo "commit ${COMMIT:-unknown}"
    date -u +%Y-%m-%dT%H:%M:%SZ
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

part tiles 150 python3 -m benchmarks.rope_tiles --out "$out/tiles.json"
part bench-rope 90 python3 -m benchmarks.bench --device cuda --only rope --out "$out/bench-rope.json"
part bench-rope-b2b 90 python3 -m benchmarks.bench --device cuda --only rope --calls 20 \
    --out "$out/bench-rope-b2b.json"
part bench-alibi 110 python3 -m benchmarks.bench --device cuda --only alibi,alibi_decode \
    --out "$out/bench-alibi.json"
part gpu-tests 110 python3 -m pytest -m gpu tests/lib -q -p no:cacheprovider -n 8 \
    --junitxml="$out/gpu-tests.xml"
part bench-sinusoidal 30 python3 -m benchmarks.bench --device cuda --only sinusoidal \
    --out "$out/bench-sinusoidal.json"
