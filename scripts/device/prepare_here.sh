#!/bin/bash
# What a device call carries, made on this machine from nothing, for a session whose checkout is
# new (ignored folders do not outlive a session): each step is skipped where its result is there.
#   .gl/    the Vulkan loader and the libglvnd packages the NVIDIA ICD loads through (Debian debs,
#           unpacked on the device by common.sh)
#   .lsrc/  llama.cpp at commit 0c1e570 as PyPI's llama-cpp-python 0.3.36 sdist vendors it (its
#           sha256 checked), less what a CUDA llama-bench does not build (~7 MB)
#   .dev/   zinc.xz, the release binary of the tree as it is, stripped and packed (common.sh
#           unpacks it); rebuilt every run, so it never lags the source
# .gitignore holds the four folders, .lbin/ included: a call carries them only where `carry` names
# them.
# With --llama, build_llama_cuda_here.sh then runs in the background (~20 minutes on 2 cores,
# niced; log /tmp/llama-here.log), leaving llama.cpp's CUDA llama-bench packed in .lbin/.
# Usage: bash scripts/device/prepare_here.sh [--llama]
set -euo pipefail
case "${1:-}" in
  "" | --llama) ;;
  *) echo "usage: bash scripts/device/prepare_here.sh [--llama]" >&2; exit 2 ;;
esac
cd "$(git rev-parse --show-toplevel)"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/zinc/target}
SDIST_SHA=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e

if ! ls .gl/libvulkan1_*.deb > /dev/null 2>&1; then
  mkdir -p .gl
  (cd .gl && apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
fi
echo "loader: $(ls .gl | tr '\n' ' ')"

if [ ! -e .lsrc/llama-src.tar.xz ]; then
  url=$(curl -fsS https://pypi.org/simple/llama-cpp-python/ \
    | grep -o 'https://[^"#]*llama_cpp_python-0\.3\.36\.tar\.gz' | head -n 1)
  [ -n "$url" ] || { echo "llama-cpp-python 0.3.36's sdist not found on PyPI" >&2; exit 1; }
  tmp=$(mktemp -d)
  curl -fsS -o "$tmp/sdist.tar.gz" "$url"
  echo "$SDIST_SHA  $tmp/sdist.tar.gz" | sha256sum -c --quiet
  tar -xzf "$tmp/sdist.tar.gz" -C "$tmp"
  mkdir -p .lsrc
  tar -C "$tmp/llama_cpp_python-0.3.36/vendor" --exclude='llama.cpp/docs' \
    --exclude='llama.cpp/models' --exclude='llama.cpp/media' --exclude='llama.cpp/gguf-py' \
    --exclude='llama.cpp/tests' --exclude='llama.cpp/benches' --exclude='llama.cpp/examples' \
    --exclude='llama.cpp/tools/server/public*' --exclude='llama.cpp/tools/server/webui' \
    --exclude='llama.cpp/ggml/src/ggml-'{sycl,hexagon,opencl,metal,et,vulkan} \
    -cJf .lsrc/llama-src.tar.xz llama.cpp
  rm -rf "$tmp"
fi
echo "llama.cpp source: $(du -h .lsrc/llama-src.tar.xz | cut -f1)"

cargo build --release -q
mkdir -p .dev
strip -o /tmp/zinc-stripped "$CARGO_TARGET_DIR/release/zinc"
xz -T2 -6 -c /tmp/zinc-stripped > .dev/zinc.xz
rm -f .dev/zinc /tmp/zinc-stripped
dirty=$(git status --porcelain -- crates Cargo.toml Cargo.lock)
echo "zinc: .dev/zinc.xz $(du -h .dev/zinc.xz | cut -f1)," \
  "commit $(git rev-parse --short HEAD)${dirty:+ with uncommitted changes}"

if [ "${1:-}" = --llama ]; then
  if ls .lbin/llama-bin.txz.* > /dev/null 2>&1; then
    echo "llama.cpp build: already in .lbin/"
  else
    nohup bash scripts/device/build_llama_cuda_here.sh > /tmp/llama-here.log 2>&1 &
    echo "llama.cpp build: started (log /tmp/llama-here.log, ~20 minutes)"
  fi
fi
