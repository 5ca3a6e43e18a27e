import CCaptureKitAPI
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

/// A stand-in for an options struct that grew by one field after its first release.
struct OptionsV2: GrowableStruct, Equatable {
    var struct_size: UInt32
    var a: Int32
    var b: Int32             // added in the "next minor release"
    static let firstReleaseSize = 8
    static var defaults: OptionsV2 { OptionsV2(struct_size: 12, a: 1, b: 2) }
}

/// docs/DESIGN.md#api-shape ("Options structs") / issue 9: a binary built against an older, smaller layout keeps working; a
/// newer, larger one works while it leaves the unknown fields zero.
@Suite struct GrowableStructTests {
    /// Calls readOptions on exactly `bytes` (a buffer of that size, so reading past it is a bug
    /// ASan reports).
    func read(_ bytes: [UInt8]) -> Result<OptionsV2, CaptureKitError> {
        let p = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 8)
        defer { p.deallocate() }
        p.copyMemory(from: bytes, byteCount: bytes.count)
        return Result { () throws(CaptureKitError) in
            try readOptions(p.assumingMemoryBound(to: OptionsV2.self), "options", defaults: OptionsV2.defaults) { $0 }
        }
    }

    func le(_ values: [UInt32]) -> [UInt8] { values.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } } }

    @Test func anOldBinaryGetsDefaultsForNewFields() throws {
        let v = try read(le([8, 5])).get()                  // the first release's 8-byte layout
        #expect(v.a == 5 && v.b == 2)
    }

    @Test func theCurrentLayoutIsReadWhole() throws {
        #expect(try read(le([12, 5, 7])).get() == OptionsV2(struct_size: 12, a: 5, b: 7))
    }

    @Test func aNewerBinaryWorksWhileItsNewFieldsAreZero() throws {
        #expect(try read(le([16, 5, 7, 0])).get().b == 7)
        #expect(throws: CaptureKitError.self) { try read(le([16, 5, 7, 1])).get() }
        if case .failure(let e) = read(le([16, 5, 7, 1])) { #expect(e.status == .unsupported) }
    }

    @Test func sizesBelowTheFirstReleaseOrAbsurdAreRejected() {
        for bad in [le([4, 5]), le([0, 5, 7]), le([7, 5])] {
            if case .failure(let e) = read(bad) { #expect(e.status == .invalidArgument && e.message.contains("struct_size")) }
            else { Issue.record("accepted \(bad)") }
        }
        var huge = le([5000]); huge += [UInt8](repeating: 0, count: 4996)
        if case .failure(let e) = read(huge) { #expect(e.status == .invalidArgument) } else { Issue.record("accepted 5000") }
    }

    @Test func nullGivesTheDefaults() throws {
        let v = try readOptions(UnsafePointer<OptionsV2>?.none, "options", defaults: OptionsV2.defaults) { $0 }
        #expect(v == OptionsV2.defaults)
    }

    /// Every growable struct's first-release size is the size of the release that introduced its
    /// layout (frozen here, so a field added later cannot silently raise the minimum and break
    /// older binaries): 0.1 for the options that kept their layout, 0.2 for ck_session_options
    /// (nested options by pointer) and the frames whose pixels became ck_image / ck_depth_map
    /// (ck_frame_desc, ck_session_frame, ck_scheduler_frame). A layout introduced by this release
    /// has exactly this header's size (a larger minimum would refuse the struct its own _init fills).
    @Test func firstReleaseSizesAreTheIntroducingLayouts() {
        #expect(ck_fit_options.firstReleaseSize == 20 && ck_dataset_options.firstReleaseSize == 80)
        #expect(ck_scheduler_options.firstReleaseSize == 108 && ck_coverage_options.firstReleaseSize == 40)
        #expect(ck_session_options.firstReleaseSize == 64)
        #expect(ck_frame_desc.firstReleaseSize == 184)
        #expect(ck_session_frame.firstReleaseSize == 232)
        #expect(ck_scheduler_frame.firstReleaseSize == 152)
        // The structs grew within 0.2 (issue 11: the writer's options, camera-native images, the
        // gates appended fields); their minimum did not move, the new fields are read when covered.
        #expect(MemoryLayout<ck_session_options>.size == 72 && MemoryLayout<ck_frame_desc>.size == 200)
        #expect(MemoryLayout<ck_session_frame>.size == 272 && MemoryLayout<ck_scheduler_frame>.size == 184)
        #expect(MemoryLayout<ck_session_frame>.offset(of: \ck_session_frame.image_chroma) == 240)
        // Issue 22: the image handover (image_release, image_release_user) appended.
        #expect(MemoryLayout<ck_session_frame>.offset(of: \ck_session_frame.image_release) == 256)
        #expect(MemoryLayout<ck_session_frame>.offset(of: \ck_session_frame.image_release_user) == 264)
        #expect(MemoryLayout<ck_scheduler_options>.size == 120)
        #expect(MemoryLayout<ck_session_frame>.offset(of: \ck_session_frame.tracking_reason) == 232)
        #expect(MemoryLayout<ck_session_frame>.offset(of: \ck_session_frame.mean_luma) == 236)
        #expect(MemoryLayout<ck_scheduler_frame>.offset(of: \ck_scheduler_frame.intrinsics) == 152)
        #expect(MemoryLayout<ck_scheduler_frame>.offset(of: \ck_scheduler_frame.tracking_reason) == 176)
        #expect(MemoryLayout<ck_scheduler_frame>.offset(of: \ck_scheduler_frame.mean_luma) == 180)
        #expect(MemoryLayout<ck_scheduler_options>.offset(of: \ck_scheduler_options.min_box_in_frame) == 112)
        #expect(MemoryLayout<ck_scheduler_options>.offset(of: \ck_scheduler_options.min_luma) == 116)
        #expect(ck_fit_options.firstReleaseSize <= MemoryLayout<ck_fit_options>.size)
        #expect(ck_dataset_options.firstReleaseSize <= MemoryLayout<ck_dataset_options>.size)
        #expect(ck_scheduler_options.firstReleaseSize <= MemoryLayout<ck_scheduler_options>.size)
        #expect(ck_coverage_options.firstReleaseSize <= MemoryLayout<ck_coverage_options>.size)
    }

    /// What each _init function fills is accepted by the call that takes it (struct_size = this
    /// header's size >= the first release's).
    @Test func initialisedFramesAreAccepted() {
        var sched: OpaquePointer?
        #expect(ck_scheduler_create(&sched, nil) == CK_OK)
        defer { ck_scheduler_free(sched) }
        var frame = ck_scheduler_frame()
        #expect(ck_scheduler_frame_init_sized(&frame, MemoryLayout<ck_scheduler_frame>.size) == CK_OK)
        #expect(frame.struct_size == UInt32(MemoryLayout<ck_scheduler_frame>.size))
        var g = ck_guidance()
        #expect(ck_scheduler_update(&g, sched, &frame) == CK_OK, "\(String(cString: ck_last_error_message()))")
        var sf = ck_session_frame()
        #expect(ck_session_frame_init_sized(&sf, MemoryLayout<ck_session_frame>.size) == CK_OK && sf.struct_size == UInt32(MemoryLayout<ck_session_frame>.size))
        var fd = ck_frame_desc()
        #expect(ck_frame_desc_init_sized(&fd, MemoryLayout<ck_frame_desc>.size) == CK_OK && fd.struct_size == UInt32(MemoryLayout<ck_frame_desc>.size))
    }
}
