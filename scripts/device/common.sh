# Sourced by the device scripts: the Vulkan loader from the debs in .gl/ (libvulkan1 and the
# libglvnd packages the NVIDIA driver's ICD loads through: libglvnd0 libegl1 libgl1 libglx0
# libgles2 libopengl0; with libvulkan1 alone no device is found), the NVIDIA ICD, Z (the zinc
# binary: $ZINC, default .dev/zinc), `synth` (the Qwen3-8B and Qwen3-30B-A3B files at /tmp/q8b.gguf
# and /tmp/moe.gguf, in the background: `wait` for them) and `tps BINARY ARGS…` (one `zinc bench`
# on Vulkan, its tok/s with the host's waiting share, the device's span, idle µs between tokens
# and dependent stages, on one line).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig >/dev/null 2>&1
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
Z=${ZINC:-.dev/zinc}
synth() {
  $Z synth --preset qwen3-8b -o /tmp/q8b.gguf > /dev/null 2>&1 &
  $Z synth --preset qwen3-30b-a3b -o /tmp/moe.gguf > /dev/null 2>&1 &
}
tps() {
  local b=$1; shift
  echo "== $b $*: $(timeout 90 $b bench --backend vulkan "$@" 2>&1 | grep -E '^\| qwen|host waited|spanned|stages' \
    | tr '\n' ' ' | sed 's/zinc bench://g' | awk -F'|' '{print $1 $(NF-1) $NF}')"
}
