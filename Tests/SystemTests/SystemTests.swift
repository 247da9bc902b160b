#if canImport(Glibc)
import Glibc
#endif
import XCTest
@testable import System

final class ErrnoTests: XCTestCase {
    func testErrnoPrintsTheTextAndTheNumber() {
        XCTAssertEqual(Errno(ENOENT).description, "No such file or directory (errno 2)")
        XCTAssertEqual(SystemError("/x", "open for reading", Errno(EACCES)).description,
                       "/x: cannot open for reading: Permission denied (errno 13)")
    }

    func testRetryingInterruptsGivesTheErrno() {
        var calls = 0
        let r = retryingInterrupts { () -> Int32 in
            calls += 1
            errno = calls < 3 ? EINTR : EBADF
            return -1
        }
        XCTAssertEqual(calls, 3, "EINTR is retried")
        XCTAssertEqual(r, .failure(Errno(EBADF)))
    }
}

final class FileDescriptorTests: XCTestCase {
    private func isOpen(_ fd: Int32) -> Bool { fcntl(fd, F_GETFD) >= 0 }

    func testTheOwnerClosesItAndTakeHandsItOn() throws {
        var raw: Int32 = -1
        do {
            let fd = try FileDescriptor.open("/dev/null", O_RDONLY)
            raw = fd.rawValue
            XCTAssertTrue(isOpen(raw))
        }
        XCTAssertFalse(isOpen(raw), "closed when its owner went away")
        let taken = try FileDescriptor.open("/dev/null", O_RDONLY).take()
        XCTAssertTrue(isOpen(taken), "take() hands the descriptor on unclosed")
        close(taken)
    }

    func testOpenThrowsTheErrnoAndIsCloseOnExec() throws {
        do {
            _ = try FileDescriptor.open("/nonexistent/loopix", O_RDONLY).take()
            XCTFail("opened a file that does not exist")
        } catch {
            XCTAssertEqual(error, .noSuchFile)
        }
        let fd = try FileDescriptor.open("/dev/null", O_RDONLY)
        XCTAssertNotEqual(fcntl(fd.rawValue, F_GETFD) & FD_CLOEXEC, 0)
    }

    func testReadAndWriteThroughAPipe() throws {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let reader = FileDescriptor(owning: fds[0]), writer = FileDescriptor(owning: fds[1])
        try Array("hello".utf8).withUnsafeBytes { try writer.writeAll($0) }
        var buffer = [UInt8](repeating: 0, count: 16)
        let n = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
        XCTAssertEqual(String(decoding: buffer[0..<n], as: UTF8.self), "hello")
        XCTAssertEqual(try reader.poll(Int16(POLLIN), milliseconds: 0), 0, "nothing left to read")
    }
}

final class ClockTests: XCTestCase {
    func testDeadlinesAreMonotonicAndGivePollTimeouts() {
        let a = MonotonicClock.now(), b = MonotonicClock.now()
        XCTAssertGreaterThanOrEqual(b, a)
        XCTAssertEqual(Deadline.never.pollTimeout, -1)
        XCTAssertEqual(Deadline.after(seconds: -5).pollTimeout, 0)
        XCTAssertTrue(Deadline.after(seconds: 0).hasPassed)
        let t = Deadline.after(seconds: 1.5).pollTimeout
        XCTAssertTrue((1400...1500).contains(t), "\(t)")
        XCTAssertEqual(Deadline.after(seconds: 1e12).pollTimeout, Int32.max, "saturates")
        XCTAssertTrue(Deadline.after(seconds: 1) < Deadline.after(seconds: 2))
    }
}

final class WorkerThreadTests: XCTestCase {
    func testStopWaitsForTheLoopToReturn() throws {
        let turns = Locked(0)
        let worker = try WorkerThread(name: "loopix.test") { token in
            while !token.shouldStop {
                turns.withLock { $0 += 1 }
                usleep(1000)
            }
        }
        while turns.withLock({ $0 }) < 3 { usleep(1000) }
        XCTAssertFalse(worker.isFinished)
        worker.stop()
        XCTAssertTrue(worker.isFinished, "stop() returns only after the loop has")
        let after = turns.withLock { $0 }
        usleep(20_000)
        XCTAssertEqual(turns.withLock { $0 }, after, "the loop no longer runs")
        worker.stop()  // idempotent
    }

    func testTheWakeupPipeEndsAPollAtOnce() throws {
        let started = Locked(false)
        let worker = try WorkerThread(name: "loopix.test", wakeup: true) { token in
            started.withLock { $0 = true }
            var p = pollfd(fd: token.wakeup!.readFD, events: Int16(POLLIN), revents: 0)
            while !token.shouldStop { _ = poll(&p, 1, 60_000) }
        }
        while !started.withLock({ $0 }) { usleep(1000) }
        let t0 = MonotonicClock.now()
        worker.stop()
        XCTAssertLessThan(MonotonicClock.now() - t0, 5_000_000_000, "not the 60 s poll timeout")
    }
}

final class LogTests: XCTestCase {
    func testTheSinkGetsLevelAndLine() {
        let lines = Locked<[String]>([])
        let old = Log.setSink { level, message in lines.withLock { $0.append("<\(level.rawValue)>\(message)") } }
        defer { Log.setSink(old) }
        Log.warning("disk nearly full")
        Log.error("photo lost")
        XCTAssertEqual(lines.withLock { $0 }, ["<4>disk nearly full", "<3>photo lost"])
    }

    func testAThrottleLetsOneLineThroughAndCountsTheRest() {
        var throttle = LogThrottle(interval: 3600)
        XCTAssertEqual(throttle.admit("refused"), "refused")
        for _ in 0..<41 { XCTAssertNil(throttle.admit("refused")) }
        var quick = LogThrottle(interval: 0)
        XCTAssertEqual(quick.admit("a"), "a")
        XCTAssertEqual(quick.admit("b"), "b", "no interval: every line")
    }

    func testAThrottleReportsHowManyItHeldBack() {
        var throttle = LogThrottle(interval: 0.05)
        XCTAssertEqual(throttle.admit("refused"), "refused")
        XCTAssertNil(throttle.admit("refused"))
        XCTAssertNil(throttle.admit("refused"))
        usleep(60_000)
        XCTAssertEqual(throttle.admit("refused"), "refused (and 2 more like it)")
    }
}
