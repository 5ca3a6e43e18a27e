import Glibc

/// A pthread mutex (no Foundation). Lives on the heap so that its address never moves.
public final class Lock: @unchecked Sendable {
    fileprivate let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always)
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}

/// A bounded queue of jobs run by one background thread: the dataset's writer (encoding and
/// writing captured frames and stream frames off the caller's thread). Jobs run first in, first
/// out, except that `urgent` ones (stream frames) go before every queued non-urgent one (image
/// encodes), so a backlog of images never delays the streams by more than the job running.
///
/// - Bounded by bytes: `submit` waits (or, with `wait: false`, refuses) while the queued jobs
///   hold more than `capacityBytes`; a job larger than the whole capacity is still taken when the
///   queue is empty, so nothing is refused forever.
/// - The first job that throws stops the queue: the jobs queued after it are discarded (they are
///   never run), and the error is kept until the next `submit`, `check`, `drain` or `stop`
///   throws it (once; the queue is then empty and idle, and takes jobs again).
/// - `drain` waits until every queued job has run; `stop` drains and joins the thread.
public final class BackgroundQueue: @unchecked Sendable {
    public typealias Job = () throws(CaptureKitError) -> Void

    /// A FIFO of jobs (amortised O(1) take; taken slots are cleared at once).
    struct JobList {
        private var jobs: [(bytes: Int, run: Job)] = []
        private var head = 0
        var isEmpty: Bool { head == jobs.count }
        mutating func append(_ j: (bytes: Int, run: Job)) { jobs.append(j) }
        mutating func take() -> (bytes: Int, run: Job) {
            let j = jobs[head]
            // The array must not keep a taken job (and the frame copy it holds) alive: under a
            // sustained load the queue never empties, so taken slots are cleared and the array
            // compacted, else memory grows with every frame written, past the byte bound.
            jobs[head] = (0, { () throws(CaptureKitError) in })  // captures nothing
            head += 1
            if head == jobs.count {
                jobs.removeAll(keepingCapacity: true); head = 0
            } else if head >= 64 && 2 * head >= jobs.count {
                jobs.removeFirst(head); head = 0  // amortised O(1) a job
            }
            return j
        }
        /// Empties the list, returning the jobs it held (to be freed outside the lock).
        mutating func removeAll() -> [(bytes: Int, run: Job)] {
            let rest = Array(jobs[head...])
            jobs.removeAll(keepingCapacity: false); head = 0
            return rest
        }
    }

    private let lock = Lock()
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    /// Urgent jobs (stream frames) run before the others (image encodes): a slow PNG never holds
    /// more than the one job running ahead of the streams.
    private var urgent = JobList(), jobs = JobList()
    private var queuedBytes = 0
    private var running = false
    private var stopping = false
    private var failure: CaptureKitError?
    /// Jobs discarded after the failure (for its message).
    private var discarded = 0
    private var thread: pthread_t?
    public let capacityBytes: Int
    /// The most bytes ever queued at once (for tests and the benchmark: the queue must stay bounded).
    private var peak = 0
    public var peakBytes: Int { lock.withLock { peak } }

    public init(capacityBytes: Int) throws(CaptureKitError) {
        self.capacityBytes = max(1, capacityBytes)
        changed = .allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        pthread_cond_init(changed, nil)
        var t = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&t, nil, { raw in
            guard let raw else { return nil }
            Unmanaged<BackgroundQueue>.fromOpaque(raw).takeRetainedValue().runLoop()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<BackgroundQueue>.fromOpaque(context).release()
            pthread_cond_destroy(changed)
            changed.deallocate()
            throw .noMemory("could not start the background writer thread (pthread_create: \(rc))")
        }
        thread = t
    }

    deinit {
        pthread_cond_destroy(changed)
        changed.deallocate()
    }

    private func wait() { pthread_cond_wait(changed, lock.mutex) }
    private func signal() { pthread_cond_broadcast(changed) }

    private func runLoop() {
        while true {
            pthread_mutex_lock(lock.mutex)
            while urgent.isEmpty && jobs.isEmpty && !stopping { wait() }
            if urgent.isEmpty && jobs.isEmpty {  // stopping and empty
                pthread_mutex_unlock(lock.mutex)
                return
            }
            let taken = urgent.isEmpty ? jobs.take() : urgent.take()
            let bytes = taken.bytes
            var run: Job? = taken.run
            running = true
            pthread_mutex_unlock(lock.mutex)

            var error: CaptureKitError? = nil
            do { try run?() } catch let e { error = e }
            run = nil  // the job and what it captures are freed here, never under the lock

            var dropped: [(bytes: Int, run: Job)] = []
            pthread_mutex_lock(lock.mutex)
            running = false
            queuedBytes -= bytes
            if let error {
                failure = error
                // Freed after unlocking: a discarded job's captures (a handed-over image's lease,
                // whose release calls the host) never run under the queue's lock.
                dropped = urgent.removeAll() + jobs.removeAll()
                discarded += dropped.count
                for j in dropped { queuedBytes -= j.bytes }
            }
            signal()
            pthread_mutex_unlock(lock.mutex)
            dropped.removeAll()
        }
    }

    /// True when a job of `bytes` would be taken now without waiting (the queue is idle, or has
    /// room). With one thread submitting, a true answer holds until it submits: the writer only
    /// frees room. Lets a caller that would drop a frame skip copying it.
    public func hasRoom(for bytes: Int) -> Bool {
        lock.withLock { (urgent.isEmpty && jobs.isEmpty && !running) || queuedBytes + bytes <= capacityBytes }
    }

    /// Queues `job` (holding about `bytes` of memory). With `wait` it waits for room; without, it
    /// returns false when the queue is full. Throws the kept failure of an earlier job. An
    /// `urgent` job runs before every queued job that is not (in order among urgent ones).
    public func submit(bytes: Int, wait shouldWait: Bool, urgent isUrgent: Bool = false, _ job: @escaping Job) throws(CaptureKitError) -> Bool {
        pthread_mutex_lock(lock.mutex)
        defer { pthread_mutex_unlock(lock.mutex) }
        while true {
            try throwFailureLocked()
            guard !stopping else { throw .state("the background writer is stopped") }
            let empty = urgent.isEmpty && jobs.isEmpty && !running
            if empty || queuedBytes + bytes <= capacityBytes { break }
            guard shouldWait else { return false }
            wait()
        }
        if isUrgent { urgent.append((bytes, job)) } else { jobs.append((bytes, job)) }
        queuedBytes += bytes
        peak = max(peak, queuedBytes)
        signal()
        return true
    }

    /// Waits until every queued job has run; throws the kept failure (once: it is then cleared,
    /// and the queue takes jobs again).
    public func drain() throws(CaptureKitError) {
        pthread_mutex_lock(lock.mutex)
        defer { pthread_mutex_unlock(lock.mutex) }
        while !urgent.isEmpty || !jobs.isEmpty || running { wait() }
        try throwFailureLocked()
    }

    /// Throws the kept failure of an earlier job, if any, without waiting.
    public func check() throws(CaptureKitError) {
        try lock.withLock { () throws(CaptureKitError) in try throwFailureLocked() }
    }

    /// Throws (and clears) the kept failure. When there is one, the queue is empty and idle.
    private func throwFailureLocked() throws(CaptureKitError) {
        guard let e = failure else { return }
        let lost = discarded == 0 ? "" : "; \(discarded) queued write\(discarded == 1 ? " was" : "s were") discarded"
        failure = nil; discarded = 0
        throw CaptureKitError(e.status, "a background write failed: \(e.message)\(lost)")
    }

    /// Bytes queued now (jobs not yet finished).
    public var pendingBytes: Int { lock.withLock { queuedBytes } }

    /// Drains (the failure, if any, is thrown after the thread has stopped) and joins the thread.
    /// Idempotent.
    public func stop() throws(CaptureKitError) {
        var err: CaptureKitError? = nil
        do { try drain() } catch { err = error }
        pthread_mutex_lock(lock.mutex)
        stopping = true
        signal()
        let t = thread
        thread = nil
        pthread_mutex_unlock(lock.mutex)
        if let t { pthread_join(t, nil) }
        if let err { throw err }
    }
}

/// Recycled byte buffers for the frames the background writer holds: a capture's copy reuses a
/// buffer an earlier frame gave back instead of faulting in fresh pages (8 MB for a 1920×1440 RGB
/// image). At most `limit` buffers are kept.
public final class BufferPool: @unchecked Sendable {
    private let lock = Lock()
    private var free: [[UInt8]] = []
    public let limit: Int

    public init(limit: Int = 4) { self.limit = limit }

    /// `rows` rows of `row` bytes, `stride` bytes apart in `src`, packed into a recycled or new
    /// buffer of exactly `row × rows` bytes.
    public func packed(_ src: UnsafeRawBufferPointer, stride: Int, row: Int, rows: Int) -> [UInt8] {
        let n = row * rows
        var buf = lock.withLock { () -> [UInt8]? in
            guard let i = free.firstIndex(where: { $0.count == n }) else { return nil }
            return free.remove(at: i)
        } ?? [UInt8](unsafeUninitializedCapacity: n) { _, count in count = n }  // every byte is written below
        buf.withUnsafeMutableBytes { d in
            guard let dp = d.baseAddress, let sp = src.baseAddress else { return }
            if stride == row {
                dp.copyMemory(from: sp, byteCount: n)
            } else {
                for y in 0..<rows { (dp + y * row).copyMemory(from: sp + y * stride, byteCount: row) }
            }
        }
        return buf
    }

    /// Gives a buffer back for a later `packed` of the same size.
    public func recycle(_ b: [UInt8]) {
        guard !b.isEmpty else { return }
        lock.withLock { if free.count < limit { free.append(b) } }
    }
}
