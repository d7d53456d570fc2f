#!/usr/bin/env bash
# Times GpuGrid against the best CPU algorithm (`bplab bench --gpu`) on a machine with an
# NVIDIA GPU and no Rust toolchain, after checking what a copied bplab needs there: glibc
# 2.35 or newer, a Vulkan loader (libvulkan.so.1), NVIDIA's Vulkan driver, and an adapter that
# is a GPU rather than a software driver. See "Timing on an NVIDIA machine" in the README
# beside this folder.
#
# Usage: nvidia-bench.sh [BPLAB] [bplab bench --gpu options...]
#   BPLAB defaults to ./bplab, then bplab on PATH. Options go to `bplab bench --gpu`, e.g.
#   `--sizes 1m,4m,10m` (default 1m,4m) or `--out DIR` (default gpu-results).
# Environment: LD_LIBRARY_PATH (a folder holding libvulkan.so.1 when the system has none),
#   VK_DRIVER_FILES (NVIDIA's ICD JSON, found in the usual places when unset).
set -euo pipefail

fail() {
    echo "nvidia-bench: $*" >&2
    exit 1
}

bplab=""
if [[ $# -gt 0 && $1 != -* ]]; then
    bplab=$1
    shift
elif [[ -x ./bplab ]]; then
    bplab=./bplab
else
    bplab=$(command -v bplab || true)
fi
[[ -n $bplab && -x $bplab ]] || fail "no bplab: build it with 'cargo build --release -p broadphase-lab' and copy target/release/bplab here, or give its path"

# bplab is built against the build machine's glibc: 2.35 or newer is needed here.
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [[ -n $glibc ]]; then
    if [[ $(printf '%s\n2.35\n' "$glibc" | sort -V | head -n1) != 2.35 ]]; then
        fail "glibc $glibc here; bplab needs 2.35 or newer (build it on an older system)"
    fi
    echo "glibc $glibc"
fi

# wgpu opens the Vulkan loader at run time.
loader_found=no
if ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
    loader_found=yes
else
    IFS=: read -r -a dirs <<<"${LD_LIBRARY_PATH:-}"
    for d in "${dirs[@]}"; do
        [[ -n $d && -e $d/libvulkan.so.1 ]] && loader_found=yes
    done
fi
[[ $loader_found == yes ]] || fail "no Vulkan loader (libvulkan.so.1): copy it from the libvulkan1 package (e.g. 'apt-get download libvulkan1; dpkg -x libvulkan1_*.deb vk') and set LD_LIBRARY_PATH to the folder holding it (vk/usr/lib/x86_64-linux-gnu)"

# NVIDIA's driver: the loader finds it through an ICD JSON, which containers often keep
# outside the loader's search path.
if [[ -z ${VK_DRIVER_FILES:-} && -z ${VK_ICD_FILENAMES:-} ]]; then
    for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
        /usr/share/vulkan/icd.d/nvidia_icd.json \
        /etc/vulkan/icd.d/nvidia_icd.json; do
        if [[ -e $icd ]]; then
            export VK_DRIVER_FILES=$icd
            echo "VK_DRIVER_FILES=$icd"
            break
        fi
    done
fi
export WGPU_BACKEND=${WGPU_BACKEND:-vulkan}

info=$("$bplab" gpu-info) || fail "bplab finds no GPU adapter: set VK_DRIVER_FILES to NVIDIA's nvidia_icd.json (often /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json) and check nvidia-smi"
echo "$info"
adapter=$(head -n1 <<<"$info")
case $adapter in
*DiscreteGpu*) ;;
*", Cpu)"*) fail "the adapter is the CPU (software) driver, not the GPU: set VK_DRIVER_FILES to NVIDIA's nvidia_icd.json" ;;
*) echo "nvidia-bench: warning: not a discrete GPU: $adapter" >&2 ;;
esac

has_out=no
for a in "$@"; do
    [[ $a == --out || $a == --out=* ]] && has_out=yes
done
extra=()
[[ $has_out == yes ]] || extra=(--out gpu-results)

# The table goes to stdout and to gpu.md (with gpu.json) in the output folder.
exec "$bplab" bench --gpu "${extra[@]}" "$@"
