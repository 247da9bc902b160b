# Sourced by scripts/build-arm64 and scripts/test-arm64: where the arm64 cross toolchain lives
# and how commands run inside its two Debian 13 (trixie) trees.
#
#   $arm64_toolchain  amd64 Debian 13 with `swiftlang` (Swift 6.0.3): the compiler, clang and lld.
#                     The same tree ../shared/tools/trixie-build makes and uses
#                     ($LOOPIX_ARM64_TOOLCHAIN, default /var/cache/loopix-trixie).
#   $arm64_root       arm64 Debian 13 with the -dev packages and arm64 `swiftlang` (its Swift
#                     runtime and aarch64 modules): the cross build's sysroot, and the root the
#                     arm64 tests run in under qemu-user ($LOOPIX_ARM64_CACHE/root).
#   $arm64_cache      everything scripts/build-arm64 keeps between runs
#                     ($LOOPIX_ARM64_CACHE, default /var/cache/loopix-arm64).
arm64_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
arm64_cache=${LOOPIX_ARM64_CACHE:-/var/cache/loopix-arm64}
arm64_root=$arm64_cache/root
arm64_debs=$arm64_cache/debs
arm64_admindir=$arm64_cache/dpkg
arm64_sdks=$arm64_cache/swift-sdks
arm64_sdk=loopix-trixie-arm64
arm64_toolchain=${LOOPIX_ARM64_TOOLCHAIN:-/var/cache/loopix-trixie}
# Build products: .build-arm64/release/{loopixd,loopix}, and the test bundle (with loopixd and
# loopix beside it, which the daemon's tests start) in .build-arm64/tests/{release,debug}/
# (symbolic links into .../aarch64-unknown-linux-gnu/, as SwiftPM lays out a cross build).
arm64_build=$arm64_top/.build-arm64
arm64_tests_build=$arm64_build/tests
# The test bundle: arm64_test_bundle 1 (optimised) or 0 (debug).
arm64_test_bundle() {
  if [ "$1" = 1 ]; then echo "$arm64_tests_build/release/LoopixPackageTests.xctest"
  else echo "$arm64_tests_build/debug/LoopixPackageTests.xctest"; fi
}
# Where the Swift runtime lives on a Debian 13 system (package libswiftlang): the binaries'
# RUNPATH, as a native build on the Pi would have it.
arm64_swift_runtime=/usr/libexec/swift/lib/swift/linux

# Runs a command in the tree $1 (chroot) inside a private mount namespace in which each
# following directory up to `--` is bound at its own path (made as an empty directory in the
# tree if missing), plus /proc, /dev, /sys and a fresh /tmp. Nothing is left mounted
# afterwards, whatever happens: the namespace goes away with the command.
#   arm64_in_tree TREE DIR... -- COMMAND...
arm64_in_tree() {
  local tree=$1 binds=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do binds+=("$1"); shift; done
  shift
  # The fresh /tmp is mounted first and the directories after it, so that one under /tmp (a
  # clone CI made there) is bound on top of the tmpfs rather than hidden by it.
  unshare --mount --propagation private bash -c '
    set -e
    tree=$1 n=$2; shift 2
    mount -t tmpfs -o mode=1777 tmpfs "$tree/tmp"
    for ((i = 0; i < n; i++)); do mkdir -p "$tree$1"; mount --bind "$1" "$tree$1"; shift; done
    mount -t proc proc "$tree/proc"
    mount --rbind /dev "$tree/dev"
    mount --rbind /sys "$tree/sys"
    exec chroot "$tree" "$@"
  ' arm64_in_tree "$tree" "${#binds[@]}" "${binds[@]}" "$@"
}

# The Debian mirror apt uses here (the trees come from the same one).
arm64_mirror() {
  local m
  m=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$m" ] || m=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  echo "${m:-http://deb.debian.org/debian}"
}

# The version of `swiftlang` in the amd64 toolchain tree and in the arm64 root. Swift modules
# can only be imported by the compiler that wrote them, so the two must be the same.
arm64_toolchain_swift() {
  chroot "$arm64_toolchain" dpkg-query -W -f '${Version}' swiftlang 2>/dev/null
}
arm64_root_swift() {
  zcat "$arm64_root/usr/share/doc/swiftlang/changelog.Debian.gz" 2>/dev/null | head -1 |
    sed -nE 's/^swiftlang \(([^)]+)\).*/\1/p'
}

# Makes a dpkg database (an --admindir for dpkg-shlibdeps and dpkg-query on this machine) of the
# library packages among the arm64 tree's .debs ($arm64_debs, the newest of each): their status
# entries, their shlibs and symbols files, and lists of their files at their paths inside
# $arm64_root. Only packages with a shlibs or symbols file are in it (what dpkg-shlibdeps asks).
#   arm64_make_admindir DIR
arm64_make_admindir() {
  local db=$1 deb ctrl name pkg
  rm -rf "$db"
  mkdir -p "$db/info" "$db/updates" "$db/triggers"
  printf 'amd64\narm64\n' >"$db/arch"
  echo 1 >"$db/info/format"
  : >"$db/status"
  ctrl=$(mktemp -d)
  for deb in "$arm64_debs"/*.deb; do
    rm -rf "${ctrl:?}"/*
    dpkg-deb -e "$deb" "$ctrl" || { rm -rf "$ctrl"; return 1; }
    [ -e "$ctrl/shlibs" ] || [ -e "$ctrl/symbols" ] || continue
    pkg=$(sed -n 's/^Package: //p' "$ctrl/control")
    name=$pkg
    grep -q '^Multi-Arch: same' "$ctrl/control" && name=$pkg:$(sed -n 's/^Architecture: //p' "$ctrl/control")
    { sed '/^Package: /a Status: install ok installed' "$ctrl/control"; echo; } >>"$db/status"
    for f in shlibs symbols; do [ ! -e "$ctrl/$f" ] || cp "$ctrl/$f" "$db/info/$name.$f"; done
    dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -E 's|^\./?||; s|/$||' |
      awk -v root="$arm64_root" '$0 != "" { print root "/" $0 }' >"$db/info/$name.list"
  done
  rm -rf "$ctrl"
}
