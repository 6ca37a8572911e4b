#!/usr/bin/env bash
# The GPU checks, as one script for a machine with one NVIDIA GPU (run from the repository root;
# OUT names a folder for the figures, default ./gpu-out). Each step prints its figures; the whole
# takes about 5 minutes on an H200. docs/backends.md and docs/time-model-kernels.md quote them.
#
#   1. tests/backends/test_cuda.py: packing and every vote transport on CUDA against the CPU, over
#      a one-rank NCCL group against the simulator, a bench over NCCL, the GPU benchmarks' rows
#   2. the default `lionsim bench --backend nccl` (every worker on the one rank)
#   3. `lionsim comm --backend nccl` (one GPU: refused in one line, exit 2)
#   4. the codec kernel table's GPU rows: python -m lionsim.perf kernels --kernel-device cuda
#   5. Muon's Newton-Schulz per matrix shape against estimate's price of it
#   6. a worker's forward + backward per precision beside bench's model of it (perf compute)
#   7. a bench whose compute is sized for a GPU (gpt paper: nanoGPT's 10.8M-parameter char model,
#      batch 64 x 256 tokens), compute measured on the GPU, float32 as lionsim trains it
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
py=${PYTHON:-python3}
step() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
step machine
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
$py -c "import torch, sys; print('torch', torch.__version__, 'CUDA', torch.version.cuda, 'python', sys.version.split()[0])"
step 1 tests/backends/test_cuda.py
$py -m pytest -q -p no:cacheprovider tests/backends/test_cuda.py 2>&1 | tail -5
step 2 bench --backend nccl
$py -m lionsim bench --backend nccl --out /tmp/gpu-bench 2>&1 | grep -v "^lionsim: run"
cp /tmp/gpu-bench/summary.csv "$OUT/bench-summary.csv"; cp /tmp/gpu-bench/time_breakdown.png "$OUT/bench-time.png"
step 3 comm --backend nccl
$py -m lionsim comm --backend nccl; echo "exit $?"
step 4 perf kernels --kernel-device cuda
$py -m lionsim.perf kernels --kernel-device cuda --kernel-table "$OUT/kernels.csv" --csv "$OUT/perf-kernels.csv" \
    2>&1 | grep -E "h200|h100|wrote|error" | head -40
step 5 perf newton-schulz --kernel-device cuda
$py -m lionsim.perf newton-schulz --kernel-device cuda --csv "$OUT/perf-ns.csv"
step 6 perf compute --kernel-device cuda
$py -m lionsim.perf compute --kernel-device cuda --csv "$OUT/perf-compute.csv"
step 7 bench gpt paper, compute measured on the GPU
$py -m lionsim bench --workload gpt --model-size paper --workers 1 --batch-size 64 --steps 20 --eval-every 20 \
    -s adamw -s lion --backend nccl --ranks 1 --compute measured --out /tmp/gpu-gpt 2>&1 | grep -v "^lionsim: run"
cp /tmp/gpu-gpt/summary.csv "$OUT/gpt-summary.csv"
step done
