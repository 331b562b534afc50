#!/bin/bash
exec > >(tee "$OUT/log.txt") 2>&1
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --target /tmp/site .device_kit/wheels/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD SINGE_CACHE=$PWD/.device_kit/cache
mkdir -p ../shared && cp -r .device_kit/shared/mechanisms ../shared/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
echo "== $(date +%T) gri30 defaults"
timeout 100 python3 -m autotune.gpu_bench --mechanisms gri30 --kernels viscosity,diffusion --settings defaults --arch sm_90 --points 2097152 --no-sanitizer --json "$OUT/gri30.json" --plot ''
echo "== $(date +%T) variants 2"
timeout 250 python3 -m autotune.gpu_bench --settings '' --arch sm_90 --styles warp-specialized --sweep-best .device_kit/v2/dd_15x3.txt --sweep-best .device_kit/v2/dd_6x4.txt --sweep-best .device_kit/v2/dv_10x4_shared.txt --sweep-best .device_kit/v2/dv_12x3.txt --sweep-best .device_kit/v2/dv_15x3_g4.txt --sweep-best .device_kit/v2/dv_4x6_shared.txt --sweep-best .device_kit/v2/dv_4x8_shared.txt --sweep-best .device_kit/v2/dv_6x5_shared.txt --sweep-best .device_kit/v2/gd_8_shared.txt --sweep-best .device_kit/v2/gv_8_shared.txt --sweep-best .device_kit/v2/hd_13x2_shared.txt --sweep-best .device_kit/v2/hd_4x3_shared.txt --sweep-best .device_kit/v2/hd_4x4_cache.txt --sweep-best .device_kit/v2/hd_8_shared.txt --sweep-best .device_kit/v2/hd_8x2_shared.txt --sweep-best .device_kit/v2/hv_4x4_shared.txt --sweep-best .device_kit/v2/hv_8_shared.txt --sweep-best .device_kit/v2/hv_8x2_shared.txt --sweep-best .device_kit/v2/hv_8x3_shared.txt  --points 2097152 --no-sanitizer --json "$OUT/variants2.json" --plot ''
echo "== $(date +%T) done"
