import Camera
import FilmCore
import Foundation
import XCTest
import Raster

final class SimulatedCameraTests: XCTestCase {
    private let clock = ManualClock()

    private func makeCamera(still: (Int, Int) = (640, 480), scene: SimulatedScene = .synthetic) -> SimulatedCamera {
        SimulatedCamera(stillWidth: still.0, stillHeight: still.1, scene: scene, clock: clock.clock)
    }

    // MARK: Lenses and lifecycle

    func testLensesAreSortedAndLabelled() {
        let camera = makeCamera()
        XCTAssertEqual(camera.lenses.map(\.label), ["13 mm", "26 mm", "77 mm"])
        XCTAssertEqual(camera.lenses.map(\.focalLength35mm), camera.lenses.map(\.focalLength35mm).sorted())
        XCTAssertEqual(Set(camera.lenses.map(\.id)).count, 3)
        for lens in camera.lenses {
            XCTAssertEqual(lens.sensorModel, "sim")
            XCTAssertEqual(lens.stillWidth, 640)
            XCTAssertEqual(lens.stillHeight, 480)
            XCTAssertLessThan(lens.focalLength, lens.focalLength35mm)
        }
        XCTAssertEqual(SimulatedCamera().lenses[1].stillWidth, 4056)
    }

    func testLifecycleErrors() throws {
        let camera = makeCamera()
        var frame = RGBImage(width: 32, height: 24)
        XCTAssertThrowsCameraError(try camera.start(lens: 3, previewWidth: 32, previewHeight: 24)) { $0.isFailed }
        XCTAssertThrowsCameraError(try camera.start(lens: -1, previewWidth: 32, previewHeight: 24)) { $0.isFailed }
        XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.1)) { $0.description.contains("not started") }
        XCTAssertThrowsCameraError(try camera.captureStill()) { $0.description.contains("not started") }

        try camera.start(lens: 0, previewWidth: 32, previewHeight: 24)
        XCTAssertEqual(try camera.nextPreviewFrame(into: &frame, timeout: 0.1).sequence, 0)
        var wrongSize = RGBImage(width: 16, height: 16)
        XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &wrongSize, timeout: 0.1)) { $0.isFailed }

        camera.stop()
        camera.stop()  // safe twice
        XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.1)) { $0.description.contains("not started") }
        // Restarting begins a new stream.
        try camera.start(lens: 1, previewWidth: 32, previewHeight: 24)
        XCTAssertEqual(try camera.nextPreviewFrame(into: &frame, timeout: 0.1).sequence, 0)
    }

    // MARK: Frames

    func testFramesHaveRisingSequenceNumbersAndMove() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 64, previewHeight: 48)
        var frame = RGBImage(width: 64, height: 48)
        var frames: [RGBImage] = []
        var sequences: [UInt64] = []
        for _ in 0..<12 {
            sequences.append(try camera.nextPreviewFrame(into: &frame, timeout: 1).sequence)
            frames.append(frame)
        }
        XCTAssertEqual(sequences, Array(0..<12))
        XCTAssertNotEqual(frames[0], frames[11], "the scene moves")
        XCTAssertGreaterThan(frames[0].meanAbsoluteDifference(frames[11]), 0.2)
        // Not flat: many distinct colours.
        var colours = Set<Int>()
        for y in 0..<48 { for x in 0..<64 { let p = frame[x, y]; colours.insert(Int(p.x) << 16 | Int(p.y) << 8 | Int(p.z)) } }
        XCTAssertGreaterThan(colours.count, 200)
    }

    func testFramesArePacedByTheClock() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        let t0 = clock.now
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        let period = Double(clock.now - t0) / 1e9
        XCTAssertEqual(period, 1.0 / 30, accuracy: 0.001, "waits for the next frame at 30 fps")

        // A timeout shorter than the wait: .timeout after waiting the whole timeout.
        let t1 = clock.now
        XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.01)) { $0.isTimeout }
        XCTAssertEqual(Double(clock.now - t1) / 1e9, 0.01, accuracy: 0.0005)

        // A late caller gets the newest frame: older ones are dropped, not queued.
        clock.advance(seconds: 1)
        let late = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        XCTAssertGreaterThanOrEqual(late.sequence, 31)
    }

    func testPreviewIsRenderedIntoTheCallersBuffer() throws {
        let camera = makeCamera()
        try camera.start(lens: 1, previewWidth: 40, previewHeight: 30)
        var frame = RGBImage(width: 40, height: 30)
        let before = frame.pixels.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        for _ in 0..<3 { _ = try camera.nextPreviewFrame(into: &frame, timeout: 1) }
        let after = frame.pixels.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        XCTAssertEqual(before, after)
        XCTAssertGreaterThan(frame.mean, 10, "something was drawn")
    }

    func testLensesFrameTheSceneDifferently() throws {
        // The checkerboard on the axis has the only dark neutral grey pixels in the scene; the
        // longer the lens, the more of the frame it fills.
        func checkerShare(lens: Int) throws -> Double {
            let camera = makeCamera()
            try camera.start(lens: lens, previewWidth: 64, previewHeight: 48)
            var frame = RGBImage(width: 64, height: 48)
            try converge(camera, &frame)
            var count = 0
            for y in 0..<48 { for x in 0..<64 { let p = frame[x, y]; if p.x == p.y && p.y == p.z && p.x < 110 { count += 1 } } }
            return Double(count) / Double(64 * 48)
        }
        let shares = try (0..<3).map(checkerShare)
        XCTAssertGreaterThan(shares[1], shares[0] * 2.5)
        XCTAssertGreaterThan(shares[2], shares[1] * 2.5)
    }

    // MARK: Exposure

    func testEVBrightensAndDarkens() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 48, previewHeight: 36)
        var frame = RGBImage(width: 48, height: 36)
        func measure(ev: Double) throws -> (mean: Double, exposure: Double) {
            camera.setControls(CameraControls(ev: ev))
            let m = try converge(camera, &frame)
            return (frame.mean, m.exposureTime * m.analogueGain)
        }
        let zero = try measure(ev: 0)
        let plus = try measure(ev: 1)
        let minus = try measure(ev: -1)
        XCTAssertGreaterThan(plus.mean, zero.mean + 10)
        XCTAssertLessThan(minus.mean, zero.mean - 10)
        XCTAssertEqual(plus.exposure / zero.exposure, 2, accuracy: 0.1)
        XCTAssertEqual(minus.exposure / zero.exposure, 0.5, accuracy: 0.03)
    }

    func testAutoExposureFollowsTheSceneAndConverges() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 32, previewHeight: 24)
        var frame = RGBImage(width: 32, height: 24)
        let bright = try converge(camera, &frame)
        camera.setSceneLight(1.0 / 16)
        let first = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        XCTAssertEqual(first.aeState, .searching)
        let dim = try converge(camera, &frame)
        let ratio = (dim.exposureTime * dim.analogueGain) / (bright.exposureTime * bright.analogueGain)
        XCTAssertEqual(ratio, 16, accuracy: 1)
        XCTAssertGreaterThan(dim.analogueGain, bright.analogueGain, "dim light raises the gain")
        XCTAssertGreaterThanOrEqual(dim.exposureTime, bright.exposureTime)
        XCTAssertLessThanOrEqual(dim.exposureTime, 1.0 / 30, "exposure fits in a frame")
        XCTAssertEqual(dim.iso, Int((dim.analogueGain * 100).rounded()))
    }

    func testAELockHoldsExposureWhileEVAndSceneChange() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 32, previewHeight: 24)
        var frame = RGBImage(width: 32, height: 24)
        try converge(camera, &frame)
        camera.setControls(CameraControls(aeLocked: true))
        let locked = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        let lockedMean = frame.mean
        XCTAssertEqual(locked.aeState, .locked)

        camera.setControls(CameraControls(ev: 2, aeLocked: true))
        camera.setSceneLight(0.25)
        var last = locked
        for _ in 0..<20 { last = try camera.nextPreviewFrame(into: &frame, timeout: 1) }
        XCTAssertEqual(last.aeState, .locked)
        XCTAssertEqual(last.exposureTime, locked.exposureTime)
        XCTAssertEqual(last.analogueGain, locked.analogueGain)
        XCTAssertLessThan(frame.mean, lockedMean - 15, "the darker scene shows: exposure did not follow it")

        // Released: AE goes after EV +2 in a quarter of the light (16× the exposure).
        camera.setControls(CameraControls(ev: 2, aeLocked: false))
        let released = try converge(camera, &frame)
        XCTAssertGreaterThan(released.exposureTime * released.analogueGain, 10 * locked.exposureTime * locked.analogueGain)
    }

    // MARK: Focus

    func testFocusTapScansThenFocuses() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 32, previewHeight: 24)
        var frame = RGBImage(width: 32, height: 24)
        func focus(at point: SIMD2<Double>) throws -> FrameMetadata {
            camera.setControls(CameraControls(focusPoint: point))
            let first = try camera.nextPreviewFrame(into: &frame, timeout: 1)
            XCTAssertEqual(first.afState, .scanning)
            var states = [first.afState]
            var m = first
            for _ in 0..<Int(SimulatedCamera.afScanFrames) + 2 {
                m = try camera.nextPreviewFrame(into: &frame, timeout: 1)
                states.append(m.afState)
            }
            XCTAssertEqual(m.afState, .focused)
            // scanning…, then focused from then on.
            let firstFocused = states.firstIndex(of: .focused) ?? states.count
            XCTAssertTrue(states[..<firstFocused].allSatisfy { $0 == .scanning })
            XCTAssertTrue(states[firstFocused...].allSatisfy { $0 == .focused })
            return m
        }
        let sky = try focus(at: SIMD2(0.5, 0.05))
        XCTAssertEqual(sky.lensPosition ?? -1, 0, accuracy: 0.01, "the sky is at infinity")
        let ground = try focus(at: SIMD2(0.1, 0.98))
        XCTAssertGreaterThan(ground.lensPosition ?? 0, 2, "the ground at the bottom is near")

        // Locked: the lens holds still and a new focus point is ignored.
        camera.setControls(CameraControls(focusPoint: SIMD2(0.1, 0.98), afLocked: true))
        camera.setControls(CameraControls(focusPoint: SIMD2(0.5, 0.05), afLocked: true))
        for _ in 0..<12 {
            let m = try camera.nextPreviewFrame(into: &frame, timeout: 1)
            XCTAssertEqual(m.afState, .locked)
            XCTAssertEqual(m.lensPosition, ground.lensPosition)
        }
        // Released with a changed point: it refocuses there.
        camera.setControls(CameraControls(focusPoint: SIMD2(0.5, 0.05)))
        XCTAssertEqual(try camera.nextPreviewFrame(into: &frame, timeout: 1).afState, .scanning)
    }

    // MARK: Faults

    func testStallTimesOutThenRecovers() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        let before = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        camera.inject(.stall(seconds: 1.5))
        for _ in 0..<4 {
            XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.1)) { $0.isTimeout }
        }
        // A still waits up to stillTimeout (1 s) for the stall to end: 1.1 s are left.
        XCTAssertThrowsCameraError(try camera.captureStill()) { $0.isTimeout }
        let after = try camera.nextPreviewFrame(into: &frame, timeout: 0.2)
        XCTAssertGreaterThan(after.sequence, before.sequence + 10, "frames missed during the stall are skipped")
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 0.1))
    }

    func testStallShorterThanTimeoutIsWaitedOut() throws {
        let camera = makeCamera()
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        camera.inject(.stall(seconds: 0.3))
        let t0 = clock.now
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 1))
        XCTAssertGreaterThanOrEqual(Double(clock.now - t0) / 1e9, 0.3)
        XCTAssertNoThrow(try camera.captureStill())
    }

    func testTimeoutNext() throws {
        let camera = makeCamera(still: (64, 48))
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        camera.inject(.timeoutNext(count: 2))
        XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.05)) { $0.isTimeout }
        XCTAssertThrowsCameraError(try camera.captureStill()) { $0.isTimeout }
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 0.05))
        XCTAssertNoThrow(try camera.captureStill())
    }

    func testDisappearThenRecover() throws {
        let camera = makeCamera(still: (64, 48))
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        camera.inject(.disappear)
        for _ in 0..<3 {
            XCTAssertThrowsCameraError(try camera.nextPreviewFrame(into: &frame, timeout: 0.1)) { $0.isDisconnected }
        }
        XCTAssertThrowsCameraError(try camera.captureStill()) { $0.isDisconnected }
        XCTAssertThrowsCameraError(try camera.start(lens: 1, previewWidth: 16, previewHeight: 12)) { $0.isDisconnected }
        camera.inject(.none)
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 0.1))
        XCTAssertEqual(try camera.captureStill().image().width, 64)
    }

    func testFaultsCanBeInjectedFromAnotherThread() throws {
        // Real clock: the consumer pulls frames while other threads flip faults.
        let camera = SimulatedCamera(stillWidth: 32, stillHeight: 24, framesPerSecond: 500)
        try camera.start(lens: 0, previewWidth: 16, previewHeight: 12)
        let injector = Thread {
            for i in 0..<200 { camera.inject(i % 2 == 0 ? .disappear : .none) }
            camera.inject(.none)
        }
        injector.start()
        var frame = RGBImage(width: 16, height: 12)
        var delivered = 0
        for _ in 0..<50 {
            do { _ = try camera.nextPreviewFrame(into: &frame, timeout: 0.05); delivered += 1 } catch let error as CameraError {
                XCTAssertTrue(error.isDisconnected || error.isTimeout, "\(error)")
            }
        }
        while !injector.isFinished { Thread.sleep(forTimeInterval: 0.001) }
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 1), "recovers after the last inject(.none)")
    }

    // MARK: Stills

    func testStillHasTheConfiguredSizeAndMatchesThePreview() throws {
        let camera = makeCamera(still: (640, 480))
        try camera.start(lens: 1, previewWidth: 160, previewHeight: 120)
        var frame = RGBImage(width: 160, height: 120)
        let previewMetadata = try converge(camera, &frame)
        let captured = try camera.captureStill()
        let (still, metadata) = (try captured.image(), captured.metadata)
        XCTAssertEqual([captured.width, captured.height], [640, 480])
        XCTAssertEqual(still.width, 640)
        XCTAssertEqual(still.height, 480)
        XCTAssertEqual(metadata.sequence, previewMetadata.sequence)
        XCTAssertEqual(metadata.exposureTime, previewMetadata.exposureTime)

        let small = still.downscaled(by: 4)
        let sameScene = small.meanAbsoluteDifference(frame)
        XCTAssertLessThan(sameScene, 8, "the still shows what the preview showed")

        // …and not what another lens shows.
        try camera.start(lens: 2, previewWidth: 160, previewHeight: 120)
        var tele = RGBImage(width: 160, height: 120)
        try converge(camera, &tele)
        XCTAssertGreaterThan(small.meanAbsoluteDifference(tele), sameScene * 2)
    }

    /// A still asked for a moment is the first frame exposed then or later: ahead of time it
    /// waits for that frame; late (the caller busy for three frames) it still gets that frame from
    /// the stream's buffers; later than the buffers reach, the oldest frame they hold.
    func testAStillForAMomentIsTheFirstFrameExposedFromThen() throws {
        let camera = makeCamera()
        try camera.start(lens: 1, previewWidth: 16, previewHeight: 12)
        var frame = RGBImage(width: 16, height: 12)
        let first = try camera.nextPreviewFrame(into: &frame, timeout: 1)
        let period: UInt64 = 1_000_000_000 / 30

        let ahead = first.timestampNs + 5 * period + period / 2
        let early = try camera.captureStill(notBefore: ahead).metadata
        XCTAssertGreaterThanOrEqual(early.timestampNs, ahead)
        XCTAssertLessThan(early.timestampNs - ahead, period, "the first frame from then on")
        XCTAssertGreaterThanOrEqual(clock.now, early.timestampNs, "not before the sensor made it")

        let moment = clock.now + period / 3
        clock.advance(4 * period)
        _ = try camera.nextPreviewFrame(into: &frame, timeout: 1)  // the preview has moved on
        let late = try camera.captureStill(notBefore: moment).metadata
        XCTAssertGreaterThanOrEqual(late.timestampNs, moment)
        XCTAssertLessThan(late.timestampNs - moment, period, "a late caller still gets the frame of its moment")
        XCTAssertLessThan(late.sequence, try camera.nextPreviewFrame(into: &frame, timeout: 1).sequence, "a frame from before the preview's")

        let gone = clock.now
        clock.advance(20 * period)
        let oldest = try camera.captureStill(notBefore: gone).metadata
        let newest = (clock.now - first.timestampNs) / period + first.sequence
        XCTAssertEqual(oldest.sequence, newest - (SimulatedCamera.bufferedStills - 1), "the oldest frame the buffers hold")
    }

    // MARK: Photos

    /// Left half red, right half blue, with a white band across the middle third.
    private func testPhoto(width: Int = 120, height: Int = 90) -> RGBImage {
        var image = RGBImage(width: width, height: height)
        for y in 0..<height {
            for x in 0..<width {
                if y >= height / 3 && y < 2 * height / 3 && x >= width / 3 && x < 2 * width / 3 {
                    image[x, y] = SIMD3(230, 230, 230)
                } else {
                    image[x, y] = x < width / 2 ? SIMD3(200, 30, 20) : SIMD3(20, 40, 200)
                }
            }
        }
        return image
    }

    func testPhotosAreFramedPerLensAndExposed() throws {
        let photo = testPhoto()
        let camera = makeCamera(still: (120, 90), scene: .photos([photo]))
        try camera.start(lens: 0, previewWidth: 40, previewHeight: 30)
        var frame = RGBImage(width: 40, height: 30)
        try converge(camera, &frame)
        // The widest lens sees the whole photo, as it is at EV 0.
        XCTAssertLessThan(frame.meanAbsoluteDifference(photo.downscaled(by: 3)), 3)
        let still = try camera.captureStill().image()
        XCTAssertLessThan(still.meanAbsoluteDifference(photo), 3)

        camera.setControls(CameraControls(ev: -1))
        let darkerMean = try { () throws -> Double in try converge(camera, &frame); return frame.mean }()
        XCTAssertLessThan(darkerMean, photo.mean - 15)

        // The 77 mm lens sees only the white middle.
        try camera.start(lens: 2, previewWidth: 40, previewHeight: 30)
        camera.setControls(CameraControls())
        try converge(camera, &frame)
        XCTAssertEqual(frame[20, 15], SIMD3(230, 230, 230))
        XCTAssertEqual(frame[0, 0], SIMD3(230, 230, 230))
    }

    func testPhotosDirectoryUsesTheLoaderAndReportsBadFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("loopix-cam-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for name in ["b.JPG", "a.png", "c.heic", "broken.png", "notes.txt"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/" + name, contents: Data([1])))
        }
        struct Unreadable: Error, CustomStringConvertible { var description: String { "not a PNG" } }
        let asked = LockedList()
        let photo = testPhoto()
        let camera = SimulatedCamera(stillWidth: 120, stillHeight: 90, photosDirectory: dir, photoLoader: { path in
            asked.append((path as NSString).lastPathComponent)
            if path.hasSuffix("broken.png") { throw Unreadable() }
            return photo
        }, clock: clock.clock)
        try camera.start(lens: 0, previewWidth: 40, previewHeight: 30)
        XCTAssertEqual(asked.items, ["a.png", "b.JPG", "broken.png", "c.heic"])
        XCTAssertEqual(camera.warnings.count, 1)
        XCTAssertTrue(camera.warnings[0].contains("broken.png") && camera.warnings[0].contains("not a PNG"), camera.warnings[0])
        var frame = RGBImage(width: 40, height: 30)
        XCTAssertNoThrow(try camera.nextPreviewFrame(into: &frame, timeout: 1))
        // Loaded once: a restart does not read them again.
        try camera.start(lens: 1, previewWidth: 40, previewHeight: 30)
        XCTAssertEqual(asked.items.count, 4)

        let emptyDir = dir + "/empty"
        try FileManager.default.createDirectory(atPath: emptyDir, withIntermediateDirectories: true)
        let none = SimulatedCamera(photosDirectory: emptyDir, photoLoader: { _ in photo }, clock: clock.clock)
        XCTAssertThrowsCameraError(try none.start(lens: 0, previewWidth: 8, previewHeight: 6)) { $0.description.contains(emptyDir) }
        let missing = SimulatedCamera(photosDirectory: dir + "/nope", photoLoader: { _ in photo }, clock: clock.clock)
        XCTAssertThrowsCameraError(try missing.start(lens: 0, previewWidth: 8, previewHeight: 6)) { $0.isFailed }
    }
}

final class LockedList: @unchecked Sendable {  // `list` is guarded by `lock`.
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.lock(); list.append(s); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}

final class SimulatedFaultTests: XCTestCase {
    func testParsesTheSimulateCommand() {
        XCTAssertEqual(SimulatedFault(command: "none"), SimulatedFault.none)
        XCTAssertEqual(SimulatedFault(command: "stall 2.5"), .stall(seconds: 2.5))
        XCTAssertEqual(SimulatedFault(command: "Timeout"), .timeoutNext(count: 1))
        XCTAssertEqual(SimulatedFault(command: "timeout  3"), .timeoutNext(count: 3))
        XCTAssertEqual(SimulatedFault(command: "disappear"), .disappear)
        for bad in ["", "stall", "stall -1", "stall x", "timeout 1.5", "explode", "none now"] {
            XCTAssertNil(SimulatedFault(command: bad), bad)
        }
        for fault in [SimulatedFault.none, .stall(seconds: 0.25), .timeoutNext(count: 4), .disappear] {
            XCTAssertEqual(SimulatedFault(command: fault.description), fault)
        }
    }
}
