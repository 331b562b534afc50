#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) the kit's new variants, warp-specialized"
timeout 50 python3 -m autotune.gpu_bench --settings '' --arch sm_90 --styles warp-specialized --sweep-best .device_kit/variants/gri30_diffusion_8x3_shared.txt --sweep-best .device_kit/variants/heptane_viscosity_26x1.txt --sweep-best .device_kit/variants/dme_viscosity_6x6.txt --sweep-best .device_kit/variants/heptane_viscosity_4x4.txt --points 2097152 --no-sanitizer --json "$OUT/variants.json" --plot ''
echo "== $(date +%T) done"
