/// The version of Loopix: the one place it is written. `loopix --version`, `loopixd
/// --version`, the photos' EXIF Software tag and scripts/package read it from here.
public let loopixVersion = "0.9.0"
