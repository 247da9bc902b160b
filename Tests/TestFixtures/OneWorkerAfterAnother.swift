import FilmCore
import Raster

/// Parallel work run one iteration after another on the caller: the first, then `afterFirst`,
/// then the others. Shows what a worker that starts late finds.
public struct OneWorkerAfterAnother: ParallelWork {
    let afterFirst: @Sendable () -> Void
    public init(afterFirst: @escaping @Sendable () -> Void) { self.afterFirst = afterFirst }
    public func perform(iterations: Int, _ body: @Sendable (Int) -> Void) {
        body(0)
        afterFirst()
        for i in 1..<max(iterations, 1) { body(i) }
    }
}
