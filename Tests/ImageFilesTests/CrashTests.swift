import Foundation
import XCTest
@testable import ImageFiles

/// A real crash: this test runs itself again in a child process that starts an atomic write,
/// writes half the bytes and dies by SIGKILL. No file may appear under the final name.
final class CrashTests: XCTestCase {
    static let childVariable = "LOOPIX_CRASH_CHILD_TARGET"

    func testProcessKilledMidWriteLeavesNoFileUnderTheFinalName() throws {
        if let target = ProcessInfo.processInfo.environment[Self.childVariable] {
            // The child: half a write, then the hardest possible stop.
            try AtomicFile.write(to: target, replace: false) { write in
                let half = [UInt8](repeating: 0xAB, count: 64 * 1024)
                try half.withUnsafeBytes { try write($0) }
                kill(getpid(), SIGKILL)
            }
            return XCTFail("the child should have been killed")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-crash-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let target = dir + "/photo.heic"
        let child = Process()
        child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        child.arguments = ["ImageFilesTests.CrashTests/testProcessKilledMidWriteLeavesNoFileUnderTheFinalName"]
        child.environment = ProcessInfo.processInfo.environment.merging([Self.childVariable: target]) { $1 }
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)
        XCTAssertEqual(child.terminationStatus, SIGKILL, "the child died of SIGKILL mid-write")
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing under the final name")
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: dir)
        XCTAssertEqual(leftovers.count, 1, "only the temporary file: \(leftovers)")
        XCTAssertTrue(leftovers.first?.hasPrefix(".photo.heic.") == true && leftovers.first?.hasSuffix(".tmp") == true)
        // And the next write to the same name succeeds despite the leftover.
        try AtomicFile.write([1, 2, 3], to: target, replace: false)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data([1, 2, 3]))
    }
}
