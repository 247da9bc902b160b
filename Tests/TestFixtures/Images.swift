/// Images and directories the display and viewfinder tests share.
import Foundation
import FilmCore
import Raster

/// A fresh empty directory under the temporary directory, removed by the caller.
public func makeTemporaryDirectory(_ label: String) throws -> String {
    let path = NSTemporaryDirectory() + "loopix-test-\(label)-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// A deterministic test pattern: every pixel different from its neighbours.
public func patternImage(width: Int, height: Int, seed: Int = 0) -> RGBImage {
    var image = RGBImage(width: width, height: height)
    for y in 0 ..< height {
        for x in 0 ..< width {
            let r = UInt8(truncatingIfNeeded: x * 7 + seed)
            let g = UInt8(truncatingIfNeeded: y * 5 + seed * 3)
            let b = UInt8(truncatingIfNeeded: (x ^ y) + seed)
            image[x, y] = SIMD3(r, g, b)
        }
    }
    return image
}

/// A flat image of one colour.
public func flatImage(width: Int, height: Int, gray: UInt8) -> RGBImage {
    RGBImage(width: width, height: height, pixels: [UInt8](repeating: gray, count: width * height * 3))
}
