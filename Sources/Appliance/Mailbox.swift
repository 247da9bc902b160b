import Foundation

/// Hands work from other threads (the control socket's) to the preview loop, which runs it
/// between frames: the state has one owner, and a slow client never blocks the loop.
final class Mailbox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [() -> Void] = []

    /// Runs `body` on the loop and waits for its result, at most `timeout` seconds.
    func call<T: Sendable>(timeout: Double, _ body: @escaping () -> T) -> T? {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        lock.lock()
        items.append {
            box.set(body())
            done.signal()
        }
        lock.unlock()
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.get()
    }

    /// Runs everything queued so far (called by the loop).
    func drain() {
        lock.lock()
        let work = items
        items.removeAll(keepingCapacity: true)
        lock.unlock()
        for item in work { item() }
    }
}

/// A value passed between two threads under a lock.
final class ResultBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?

    func set(_ v: T) {
        lock.lock()
        value = v
        lock.unlock()
    }

    func get() -> T? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
