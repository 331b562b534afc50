#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) timing: the new defaults"
timeout 120 python3 -m autotune.gpu_bench --mechanisms gri30,heptane,dodecane --kernels viscosity,diffusion --settings defaults --arch sm_90 --points 2097152 --no-sanitizer --json "$OUT/defaults.json" --plot "$OUT/defaults.png"
echo "== $(date +%T) compute-sanitizer, warp-specialized"
timeout 90 python3 -m autotune.gpu_bench --mechanisms gri30,heptane --kernels viscosity,diffusion --settings defaults --arch sm_90 --styles warp-specialized --points 65536 --json "$OUT/sanitizer.json" --plot ''
echo "== $(date +%T) done"
