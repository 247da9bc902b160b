#if canImport(Glibc)
import Glibc
#endif
import FilmCore
import Foundation
import System
import XCTest
@testable import Appliance
import Raster

final class SnapshotTests: XCTestCase {
    /// A directory inside the allowed one is swapped for a symbolic link (to the photos, and to
    /// a directory outside) and back, as fast as a thread can, while snapshots are written into
    /// it: not one PNG ever lands outside the allowed directory.
    func testSwappingADirectoryForALinkNeverMovesASnapshotOut() throws {
        let dir = try makeTempDirectory(self)
        let allowed = dir + "/allowed", photos = dir + "/photos", outside = dir + "/outside"
        for d in [allowed, photos, outside] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
        let frame = RGBImage(width: 32, height: 32)
        let swapped = allowed + "/x"
        XCTAssertEqual(mkdir(swapped, 0o755), 0)

        let stop = Locked(false)
        let swaps = Locked(0)
        let swapper = Thread {
            var n = 0
            while !stop.withLock({ $0 }) {
                // The real directory moves aside (keeping what was written in it) and a link takes its name.
                // Each state lasts a moment, so that a check and a write can fall on either side.
                rename(swapped, allowed + "/kept-\(n)")
                symlink(n % 2 == 0 ? outside : photos, swapped)
                usleep(UInt32.random(in: 0...300))
                unlink(swapped)
                mkdir(swapped, 0o755)
                usleep(UInt32.random(in: 0...300))
                n += 1
                swaps.withLock { $0 = n }
            }
        }
        swapper.start()
        var written = 0, refused = 0
        for i in 0..<2000 {
            do {
                try Snapshot.write(frame, to: "\(swapped)/s\(i).png", allowed: [allowed], kept: [photos])
                written += 1
            } catch {
                refused += 1
            }
        }
        stop.withLock { $0 = true }
        while !swapper.isFinished { Thread.sleep(forTimeInterval: 0.01) }

        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside), [])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: photos), [])
        // The race was run: the swapper went round many times, and snapshots were both written
        // (into the real directory) and refused (a link or nothing at the name).
        XCTAssertGreaterThan(swaps.withLock { $0 }, 20)
        XCTAssertGreaterThan(written, 0)
        XCTAssertGreaterThan(refused, 0)
        // Every one written is inside the allowed directory.
        let inside = try FileManager.default.subpathsOfDirectory(atPath: allowed).filter { $0.hasSuffix(".png") }
        XCTAssertEqual(inside.count, written)
    }

    /// A link below the allowed directory is refused even when it points inside it; a path
    /// with ".." is refused; the allowed directory may itself be named through a link.
    func testLinksBelowTheAllowedDirectoryAreNotFollowed() throws {
        let dir = try makeTempDirectory(self)
        let allowed = dir + "/allowed"
        try FileManager.default.createDirectory(atPath: allowed + "/sub", withIntermediateDirectories: true)
        XCTAssertEqual(symlink(allowed + "/sub", allowed + "/link"), 0)
        XCTAssertEqual(symlink(allowed, dir + "/alias"), 0)
        let frame = RGBImage(width: 4, height: 4)
        XCTAssertThrowsError(try Snapshot.write(frame, to: allowed + "/link/a.png", allowed: [allowed], kept: [])) { error in
            XCTAssertEqual("\(error)", "\(allowed)/link/a.png: link is not a directory (symbolic links are not followed below \(allowed))")
        }
        XCTAssertThrowsError(try Snapshot.write(frame, to: allowed + "/sub/../../b.png", allowed: [allowed], kept: []))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir + "/b.png"))
        XCTAssertNoThrow(try Snapshot.write(frame, to: dir + "/alias/sub/c.png", allowed: [dir + "/alias"], kept: []))
        XCTAssertTrue(FileManager.default.fileExists(atPath: allowed + "/sub/c.png"))
        XCTAssertNoThrow(try Snapshot.write(frame, to: allowed + "/d.png", allowed: [dir + "/alias"], kept: []))
    }
}
