#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) timing: viscosity at the paper's settings"
timeout 60 python3 -m autotune.gpu_bench --mechanisms dme,heptane --kernels viscosity --settings paper --arch sm_90 --points 2097152 --no-sanitizer --json "$OUT/paper.json" --plot ''
echo "== $(date +%T) variants: Wilke groups that divide the species among the warps"
timeout 90 python3 -m autotune.gpu_bench --settings '' --arch sm_90 --styles warp-specialized --sweep-best .device_kit/v6/dv_10x4_g3.txt --sweep-best .device_kit/v6/dv_5_g6.txt --sweep-best .device_kit/v6/dv_5x6_g6.txt --sweep-best .device_kit/v6/dv_6_g5.txt --sweep-best .device_kit/v6/hv_13x2_g4.txt --sweep-best .device_kit/v6/hv_13x3_g4.txt  --points 2097152 --no-sanitizer --json "$OUT/variants.json" --plot ''
echo "== $(date +%T) done"
