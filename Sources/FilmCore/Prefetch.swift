/// Asking the CPU for the source's bytes before a pass reaches them. A 12 MP frame (36 MB) is
/// larger than the last-level cache, so every row of it comes from memory; the hardware's
/// prefetcher alone left the grain pass waiting on it (grain + blend at 12 MP 1.56 → 1.46 ns a
/// pixel with this, where at 720p, the frame in cache, it costs 1.46). Only the grain pass
/// asks: the colour LUT, the first reader in the full pipeline, spends 4 ns a pixel, long
/// enough for the hardware's prefetcher, and asking there made it slower.
///
/// Swift has no prefetch of its own, so this binds LLVM's target-independent intrinsic by
/// name: `prefetcht0` on x86-64, `prfm pldl1keep` on arm64. It is a hint, with no effect on
/// what a pass computes, and it never faults, so the address may lie past the buffer's end
/// (it is made with integer arithmetic, not pointer arithmetic, for that reason).
enum Prefetch {
    /// Bytes ahead of the pass that it asks for: a few hundred nanoseconds of its work, the
    /// time memory takes to answer (1 KB to 8 KB measured the same).
    static let distance = 2048

    /// Asks for the cache line `distance` bytes past `offset` bytes into `base`, for reading.
    @inline(__always)
    static func ahead(of base: UnsafePointer<UInt8>, _ offset: Int) {
        guard let address = UnsafeRawPointer(bitPattern: UInt(bitPattern: base) &+ UInt(bitPattern: offset &+ distance)) else { return }
        llvmPrefetch(address, 0, 3, 1)
    }
}

/// `llvm.prefetch(address, rw: 0 read, locality: 3 keep in all levels, cache type: 1 data)`.
@_silgen_name("llvm.prefetch.p0")
private func llvmPrefetch(_ address: UnsafeRawPointer, _ write: Int32, _ locality: Int32, _ cacheType: Int32)
