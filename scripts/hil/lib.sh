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

# Succeeds when the kernel in directory $1 was configured with every line given after it
# (CONFIG_X=y…), as its boot/config-<version> says.
hil_kernel_has() {
  local dir=$1 cfg line
  shift
  cfg=$(ls -1 "$dir"/boot/config-* 2>/dev/null | sort -V | tail -1)
  [ -n "$cfg" ] || return 1
  for line in "$@"; do grep -qx -- "$line" "$cfg" || return 1; done
}

# What booting a Debian disk image under systemd (scripts/hil/boot-test) needs beyond the
# bench's drivers: an ext4 root on virtio-blk, autofs, seccomp and cgroup BPF for the unit's
# sandbox, 9p for the shared directory.
hil_disk_boot_config=(CONFIG_EXT4_FS=y CONFIG_VIRTIO_BLK=y CONFIG_AUTOFS_FS=y CONFIG_SECCOMP_FILTER=y
                      CONFIG_CGROUP_BPF=y CONFIG_9P_FS=y CONFIG_NET_9P_VIRTIO=y)

# Like hil_kernel_dir, for a kernel that can boot a disk image: the first of
# $LOOPIX_HIL_KERNEL_DIR, ../shared/hil and the cache whose configuration has
# hil_disk_boot_config (../shared/hil's 6.12 has no ext4). Fails when there is none.
hil_boot_kernel_dir() {
  local d
  for d in ${LOOPIX_HIL_KERNEL_DIR:-} "$hil_shared" "$hil_cache"; do
    if [ -n "$d" ] && compgen -G "$d/boot/vmlinuz-*" >/dev/null && [ -d "$d/lib/modules" ] &&
       hil_kernel_has "$d" "${hil_disk_boot_config[@]}"; then
      (cd "$d" && pwd)
      return 0
    fi
  done
  return 1
}

# What qemu prints when KVM stops a guest instead of running it (qemu then pauses the VM; it
# does not exit): an instruction KVM could not emulate ("KVM internal error. Suberror: 1" and
# "emulation failure", seen on `lock cmpxchg16b` under nested virtualisation), or a failed entry.
hil_kvm_error_re='KVM internal error|emulation failure|KVM: entry failed'

# The qemu the KVM probe runs and the KVM device it needs (overridable, for tests).
hil_qemu=${LOOPIX_HIL_QEMU:-qemu-system-x86_64}
hil_kvm_dev=${LOOPIX_HIL_KVM_DEVICE:-/dev/kvm}

# Succeeds while process group $1 has a process that is not a zombie.
hil_group_alive() {
  local pg=$1 f s
  for f in /proc/[0-9]*/stat; do
    read -r s < "$f" 2>/dev/null || continue
    s=${s##*) }  # "pid (comm) state ppid pgrp ..." → "state ppid pgrp ..."
    set -- $s
    [ "${3:-}" = "$pg" ] && [ "$1" != Z ] && return 0
  done
  return 1
}

# Kills process group $1 (TERM, then KILL if anything is left after 5 s) and returns when none
# of its processes is left.
hil_kill_group() {
  local pg=$1 i
  kill -TERM -- "-$pg" 2>/dev/null || return 0
  for i in $(seq 50); do hil_group_alive "$pg" || return 0; sleep 0.1; done
  kill -KILL -- "-$pg" 2>/dev/null || true
  for i in $(seq 50); do hil_group_alive "$pg" || return 0; sleep 0.1; done
}

# One entry of a newc cpio archive (the format the kernel unpacks as an initramfs):
#   hil_cpio_entry INODE NAME OCTAL_MODE [FILE [RDEV_MAJOR RDEV_MINOR]]
hil_cpio_entry() {
  local ino=$1 name=$2 mode=$3 file=${4:-} major=${5:-0} minor=${6:-0} size=0 n
  if [ -n "$file" ]; then size=$(stat -c %s "$file"); fi
  n=$(( ${#name} + 1 ))
  printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
    "$ino" "$((8#$mode))" 0 0 1 0 "$size" 0 0 "$major" "$minor" "$n" 0
  printf '%s\0' "$name"
  head -c $(( (4 - (110 + n) % 4) % 4 )) /dev/zero
  if [ -n "$file" ]; then cat "$file"; fi
  head -c $(( (4 - size % 4) % 4 )) /dev/zero
}

# Builds the probe VM's initramfs once (cached by the source's hash): /init is
# scripts/hil/kvm-probe.c compiled without libc, beside /dev/console. Prints its path.
hil_kvm_probe_initrd() {
  local src=$hil_root/scripts/hil/kvm-probe.c dir
  dir=$hil_cache/kvm-probe/$(sha256sum "$src" | cut -c1-16)
  if [ ! -s "$dir/initrd.cpio" ]; then
    mkdir -p "$dir"
    "${CC:-cc}" -static -nostdlib -ffreestanding -fno-pie -no-pie -fno-stack-protector -O2 \
      -o "$dir/init.$$" "$src" || return 1
    mv -f "$dir/init.$$" "$dir/init"
    { hil_cpio_entry 1 dev 040755
      hil_cpio_entry 2 dev/console 020600 "" 5 1
      hil_cpio_entry 3 init 0100755 "$dir/init"
      hil_cpio_entry 0 'TRAILER!!!' 0
    } > "$dir/initrd.$$" || return 1
    mv -f "$dir/initrd.$$" "$dir/initrd.cpio"
  fi
  echo "$dir/initrd.cpio"
}

# Succeeds when KVM really runs guest code here: boots KERNEL under KVM (with virtme-ng's qemu
# flags for KVM) with the probe's init (kvm-probe.c: `lock cmpxchg16b` on a static object, on
# fresh pages and contended by two CPUs — what stopped real bench guests under nested KVM) and
# waits up to $LOOPIX_HIL_PROBE_TIMEOUT (default 30) s for its "ok". It fails as soon as qemu
# dies (nested KVM on some hosts aborts at once: "failed to set MSR 0x10a") or prints a KVM
# internal error. On failure hil_kvm_why says why, in one line. While it runs, hil_probe_pg is
# the probe VM's process group and hil_probe_dir its scratch directory (for a caller's exit trap).
hil_kvm_why="" hil_probe_pg="" hil_probe_dir=""
hil_kvm_probe() {
  local kernel=$1 bound=${LOOPIX_HIL_PROBE_TIMEOUT:-30} initrd alive rc line
  hil_kvm_why=""
  if [ ! -e "$hil_kvm_dev" ]; then hil_kvm_why="no $hil_kvm_dev"; return 1; fi
  if [ ! -r "$hil_kvm_dev" ] || [ ! -w "$hil_kvm_dev" ]; then
    hil_kvm_why="$hil_kvm_dev is not readable and writable by $(id -un)"; return 1
  fi
  if ! command -v "$hil_qemu" >/dev/null; then hil_kvm_why="no $hil_qemu"; return 1; fi
  if ! initrd=$(hil_kvm_probe_initrd 2>/dev/null); then
    hil_kvm_why="cannot compile scripts/hil/kvm-probe.c with ${CC:-cc}"; return 1
  fi
  hil_probe_dir=$(mktemp -d /var/tmp/loopix-kvm-probe.XXXXXX)
  local dir=$hil_probe_dir
  # timeout puts qemu in a process group of its own (timeout's pid).
  timeout -k 5 "$bound" "$hil_qemu" -machine accel=kvm -cpu host,topoext=on -smp 2 -m 256M \
    -nodefaults -no-user-config -display none -serial stdio -no-reboot \
    -kernel "$kernel" -initrd "$initrd" -append "console=ttyS0 rdinit=/init panic=-1 quiet" \
    </dev/null >"$dir/out" 2>&1 &
  hil_probe_pg=$!
  # (stderr off: bash would report qemu's abort, "Aborted ... timeout -k 5 ...", as a job notice)
  {
    while :; do
      alive=1
      kill -0 "$hil_probe_pg" 2>/dev/null || alive=0
      if line=$(grep -m1 -E "$hil_kvm_error_re" "$dir/out"); then
        hil_kvm_why="the probe VM stopped: $line"; break
      fi
      if line=$(grep -m1 "loopix-kvm-probe: FAILED" "$dir/out"); then
        hil_kvm_why="wrong results in the probe VM: ${line#*FAILED: }"; break
      fi
      grep -q "loopix-kvm-probe: ok" "$dir/out" && break
      if [ "$alive" = 0 ]; then
        rc=0; wait "$hil_probe_pg" || rc=$?
        if [ "$rc" = 124 ]; then
          hil_kvm_why="the probe VM did not finish within $bound s"
        else
          line=$(grep -m1 -iE 'error|panic' "$dir/out" || grep -v '^\s*$' "$dir/out" | tail -1 || true)
          hil_kvm_why="qemu exited ($rc) before the probe finished${line:+: $line}"
        fi
        break
      fi
      sleep 0.1
    done
    hil_kill_group "$hil_probe_pg"
    wait "$hil_probe_pg" || true
  } 2>/dev/null
  hil_probe_pg="" hil_probe_dir=""
  rm -rf "$dir"
  hil_kvm_why=$(printf '%s' "$hil_kvm_why" | tr -d '\r')
  [ -z "$hil_kvm_why" ]
}
