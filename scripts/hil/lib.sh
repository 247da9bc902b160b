# Sourced by scripts/hil/*: where the bench kernel, virtme-ng and the caches live.
hil_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
hil_cache=${LOOPIX_HIL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loopix/hil}
hil_venv=${LOOPIX_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/loopix/venv}
hil_shared=${LOOPIX_HIL_SHARED:-$hil_root/../shared/hil}

# Prints the directory holding boot/vmlinuz-<ver> and lib/modules/<ver> (the layout virtme-ng
# expects of a kernel outside a source tree): $LOOPIX_HIL_KERNEL_DIR, else ../shared/hil, else
# the cache scripts/hil/build-kernel fills. Fails when there is none.
hil_kernel_dir() {
  local d
  for d in ${LOOPIX_HIL_KERNEL_DIR:-} "$hil_shared" "$hil_cache"; do
    if [ -n "$d" ] && compgen -G "$d/boot/vmlinuz-*" >/dev/null && [ -d "$d/lib/modules" ]; then
      (cd "$d" && pwd)
      return 0
    fi
  done
  return 1
}

# The kernel image in such a directory (the newest, if there are several).
hil_kernel_image() {
  ls -1 "$1"/boot/vmlinuz-* | sort -V | tail -1
}

# Succeeds when qemu can really run a KVM guest here: /dev/kvm is usable and a paused
# qemu -enable-kvm stays up (nested KVM on some hosts aborts at once: "failed to set MSR").
hil_kvm_works() {
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
  local rc=0
  (timeout 3 qemu-system-x86_64 -enable-kvm -cpu host -machine q35 -m 32 -nodefaults \
    -display none -S >/dev/null 2>&1) 2>/dev/null || rc=$?
  [ "$rc" = 124 ]
}
