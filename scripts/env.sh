# Sourced by the other scripts: puts a Swift toolchain on PATH (a /opt/swift install, as on
# the project's machines, wins over nothing; an existing `swift` on PATH is kept).
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
  export PATH=/opt/swift/usr/bin:$PATH
fi
