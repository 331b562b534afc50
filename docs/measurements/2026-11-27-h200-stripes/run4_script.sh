#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) local probe"
timeout 20 .device_kit/local
echo "== $(date +%T) timing: the defaults (no register stripes where the copy is in shared memory)"
timeout 170 python3 -m autotune.gpu_bench --mechanisms dme,heptane,gri30 --kernels viscosity,diffusion --settings defaults --arch sm_90 --points 2097152 --no-sanitizer --json "$OUT/defaults.json" --plot "$OUT/defaults.png"
echo "== $(date +%T) variants: controls"
timeout 70 python3 -m autotune.gpu_bench --settings '' --arch sm_90 --styles warp-specialized --sweep-best .device_kit/v4/gd_8x4_shared.txt --sweep-best .device_kit/v4/hd_8x4_shared.txt --sweep-best .device_kit/v4/dv_15x3.txt --sweep-best .device_kit/v4/hd_13x2.txt --points 2097152 --no-sanitizer --json "$OUT/variants.json" --plot ''
echo "== $(date +%T) done"
