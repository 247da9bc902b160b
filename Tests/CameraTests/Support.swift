import Camera
import FilmCore
import Foundation
import XCTest
import Raster

/// A monotonic clock that only moves when the camera sleeps on it (or a test advances it).
final class ManualClock: @unchecked Sendable {  // `ns` is guarded by `lock`.
    private let lock = NSLock()
    private var ns: UInt64 = 5_000_000_000

    var now: UInt64 { lock.lock(); defer { lock.unlock() }; return ns }

    func advance(_ delta: UInt64) { lock.lock(); ns += delta; lock.unlock() }
    func advance(seconds: Double) { advance(UInt64(seconds * 1e9)) }

    var clock: SimulatedCamera.Clock {
        SimulatedCamera.Clock(now: { self.now }, sleep: { self.advance($0) })
    }
}

extension RGBImage {
    /// Mean of all channels.
    var mean: Double {
        Double(pixels.reduce(0) { $0 + Int($1) }) / Double(pixels.count)
    }

    /// Box-averaged down by an integer factor.
    func downscaled(by f: Int) -> RGBImage {
        var out = RGBImage(width: width / f, height: height / f)
        for y in 0..<out.height {
            for x in 0..<out.width {
                var sum = SIMD3<Int>(repeating: 0)
                for sy in 0..<f {
                    for sx in 0..<f {
                        let p = self[x * f + sx, y * f + sy]
                        sum &+= SIMD3(Int(p.x), Int(p.y), Int(p.z))
                    }
                }
                let n = f * f
                out[x, y] = SIMD3(UInt8(sum.x / n), UInt8(sum.y / n), UInt8(sum.z / n))
            }
        }
        return out
    }

    /// Mean absolute difference per channel value.
    func meanAbsoluteDifference(_ other: RGBImage) -> Double {
        precondition(width == other.width && height == other.height)
        var total = 0
        for i in pixels.indices { total += abs(Int(pixels[i]) - Int(other.pixels[i])) }
        return Double(total) / Double(pixels.count)
    }
}

/// Pulls frames until auto-exposure has converged; returns the last one's metadata.
@discardableResult
func converge(_ camera: SimulatedCamera, _ frame: inout RGBImage, file: StaticString = #filePath, line: UInt = #line) throws -> FrameMetadata {
    var last = FrameMetadata()
    for _ in 0..<40 {
        last = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        if last.aeState == .converged { return last }
    }
    XCTFail("auto-exposure did not converge (\(last))", file: file, line: line)
    return last
}

func XCTAssertThrowsCameraError(_ expression: @autoclosure () throws -> Any, _ check: (CameraError) -> Bool,
                                file: StaticString = #filePath, line: UInt = #line) {
    do {
        _ = try expression()
        XCTFail("expected a camera error", file: file, line: line)
    } catch let error as CameraError {
        XCTAssertTrue(check(error), "unexpected \(error)", file: file, line: line)
    } catch {
        XCTFail("unexpected \(error)", file: file, line: line)
    }
}

extension CameraError {
    var isTimeout: Bool { if case .timeout = self { return true } else { return false } }
    var isDisconnected: Bool { if case .disconnected = self { return true } else { return false } }
    var isFailed: Bool { if case .failed = self { return true } else { return false } }
}
