import CCaptureKitAPI
import Foundation
import Testing
@testable import CaptureKit
@testable import CaptureKitCore

#if DEBUG
/// Every status a header's @return list promises is produced by some test (issue 9; checked by
/// scripts/check_status_coverage.py over the status trace). This suite produces the ones arguments
/// alone cannot: a disk that fails (CK_E_IO, by arming the core's file seam — the Nth file call
/// from now on this thread fails with EIO — around one C entry point at a time), and the states
/// and collisions the other suites do not reach. Every call goes through the exported C function.
@Suite struct ABIStatusTests {
    typealias Root = FaultInjectionTests.Root

    static let w: UInt32 = 16, h: UInt32 = 12
    static let depth = [Float](repeating: 1.25, count: Int(w * h))
    static let confidence = [UInt8](repeating: 2, count: Int(w * h))
    static let gray = [UInt8](repeating: 128, count: Int(w * h))
    static let intrinsics = ck_intrinsics(fx: 14, fy: 14, cx: 8, cy: 6, width: w, height: h)
    static var identity: ck_mat4 {
        var m = ck_mat4()
        _ = ck_pose_from_quat(&m, ck_quat(x: 0, y: 0, z: 0, w: 1), ck_vec3(x: 0, y: 0, z: 2))
        return m
    }
    static var box: ck_box {
        var b = ck_box()
        _ = ck_box_init(&b, ck_vec3(x: 0, y: 0, z: 0), ck_vec3(x: 0.4, y: 0.4, z: 0.4), 0)
        return b
    }

    /// For N = 1, 2, …: a fresh `setup` (no fault armed), then `op` with the Nth file call failing,
    /// then `cleanup`; until `op` completes without the fault firing. Returns every status `op`
    /// gave. Each run's outcome must be clean: CK_OK or the seam's CK_E_IO (other statuses are
    /// returned too, so a test can see them).
    static func sweep<S>(limit: Int = 400, setup: () throws -> S, op: (S) -> ck_status,
                         cleanup: (S) -> Void = { _ in }) rethrows -> Set<ck_status> {
        var seen = Set<ck_status>()
        for n in 1...limit {
            let state = try setup()
            FileIO.failCall(after: n)
            let status = op(state)
            let fired = !FileIO.faultPending
            FileIO.stopFailing()
            cleanup(state)
            seen.insert(status)
            if !fired { return seen }
        }
        Issue.record("the operation still hit the armed fault after \(limit) file calls")
        return seen
    }

    // MARK: fixtures through the C API

    static func depthMap(_ body: (UnsafePointer<ck_depth_map>, UnsafePointer<ck_depth_map>) -> ck_status) -> ck_status {
        depth.withUnsafeBufferPointer { d in
            confidence.withUnsafeBufferPointer { c in
                var dm = ck_depth_map(data: d.baseAddress, width: w, height: h, stride: 0, format: Int32(CK_FORMAT_DEPTH_F32.rawValue), reserved: 0)
                var cm = ck_depth_map(data: c.baseAddress, width: w, height: h, stride: 0, format: Int32(CK_FORMAT_U8.rawValue), reserved: 0)
                return body(&dm, &cm)
            }
        }
    }

    static func addFrame(_ ds: OpaquePointer?, t: Double = 0) -> ck_status {
        gray.withUnsafeBufferPointer { g in
            depthMap { d, _ in
                var desc = ck_frame_desc()
                _ = ck_frame_desc_init_sized(&desc, MemoryLayout<ck_frame_desc>.size)
                desc.timestamp = t
                desc.pose = identity
                desc.intrinsics = intrinsics
                desc.image = ck_image(data: g.baseAddress, width: w, height: h, stride: 0, format: Int32(CK_IMAGE_FORMAT_GRAY8.rawValue), reserved: 0)
                desc.depth = d.pointee
                var id: UInt64 = 0
                return ck_dataset_add_frame(&id, ds, &desc)
            }
        }
    }

    /// A dataset in a fresh folder, optionally with one frame.
    final class Open {
        let root: Root
        var ds: OpaquePointer?
        /// `sync`: CK_WRITE_MODE_SYNC, so that adds write on this thread (the fault injection is
        /// per thread, and a background write's failure is reported by a later call).
        init(_ name: String, frames: Int = 0, sync: Bool = false) {
            root = Root(name)
            var o = ck_dataset_options()
            _ = ck_dataset_options_init_sized(&o, MemoryLayout<ck_dataset_options>.size)
            if sync { o.write_mode = Int32(CK_WRITE_MODE_SYNC.rawValue) }
            o.start_time_unix = 1_795_000_000  // streaming needs it
            #expect(ck_dataset_create(&ds, root.dataset, &o) == CK_OK)
            for i in 0..<frames { #expect(ABIStatusTests.addFrame(ds, t: Double(i)) == CK_OK) }
        }
        func close() { _ = ck_dataset_close(ds); ds = nil }
    }

    static func sessionFrame(_ t: Double, _ body: (UnsafePointer<ck_session_frame>) -> ck_status) -> ck_status {
        gray.withUnsafeBufferPointer { g in
            depthMap { d, c in
                var f = ck_session_frame()
                _ = ck_session_frame_init_sized(&f, MemoryLayout<ck_session_frame>.size)
                f.timestamp = t
                f.pose = identity
                f.intrinsics = intrinsics
                f.image = ck_image(data: g.baseAddress, width: w, height: h, stride: 0, format: Int32(CK_IMAGE_FORMAT_GRAY8.rawValue), reserved: 0)
                f.depth = d.pointee
                f.confidence = c.pointee
                return body(&f)
            }
        }
    }

    /// ck_session_create with the default options plus the start time streaming needs.
    static func createSession(_ s: inout OpaquePointer?, _ dir: String, _ b: inout ck_box) -> ck_status {
        var dso = ck_dataset_options()
        _ = ck_dataset_options_init_sized(&dso, MemoryLayout<ck_dataset_options>.size)
        dso.start_time_unix = 1_795_000_000
        var so = ck_session_options()
        _ = ck_session_options_init_sized(&so, MemoryLayout<ck_session_options>.size, Int32(CK_PRESET_OBJECT_CAPTURE.rawValue))
        return withUnsafePointer(to: &dso) { d in
            so.dataset = d
            return ck_session_create(&s, dir, &so, &b)
        }
    }

    final class Sess {
        let root: Root
        var s: OpaquePointer?
        init(_ name: String, frames: Int = 0) {
            root = Root(name)
            var b = ABIStatusTests.box
            #expect(ABIStatusTests.createSession(&s, root.dataset, &b) == CK_OK)
            for i in 0..<frames {
                var r = ck_session_result()
                #expect(ABIStatusTests.sessionFrame(Double(i) / 30) { ck_session_process(&r, s, $0) } == CK_OK)
            }
        }
        func close() { _ = ck_session_close(s); s = nil }
    }

    // MARK: datasets

    @Test func datasetCallsReportAFailingDiskAsIO() {
        let create = Self.sweep(setup: { Root("create") }, op: { root in
            var ds: OpaquePointer?
            let s = ck_dataset_create(&ds, root.dataset, nil)
            _ = ck_dataset_close(ds)
            return s
        })
        #expect(create.contains(CK_E_IO) && create.contains(CK_OK))

        let open = Self.sweep(setup: { () -> Open in let o = Open("open", frames: 1); o.close(); return o }, op: { o in
            let s = ck_dataset_open(&o.ds, o.root.dataset)
            return s
        }, cleanup: { $0.close() })
        #expect(open.contains(CK_E_IO))

        let readOnly = Self.sweep(setup: { () -> Open in let o = Open("readonly", frames: 1); o.close(); return o }, op: { o in
            ck_dataset_open_readonly(&o.ds, o.root.dataset)
        }, cleanup: { $0.close() })
        #expect(readOnly.contains(CK_E_IO) && readOnly.contains(CK_OK))

        let add = Self.sweep(setup: { Open("add", sync: true) }, op: { Self.addFrame($0.ds) }, cleanup: { $0.close() })
        #expect(add.contains(CK_E_IO))

        let remove = Self.sweep(setup: { Open("remove", frames: 1) }, op: { ck_dataset_remove_frame($0.ds, 0) },
                                cleanup: { $0.close() })
        #expect(remove.contains(CK_E_IO))

        let setBox = Self.sweep(setup: { Open("setbox") }, op: { o in var b = Self.box; return ck_dataset_set_box(o.ds, &b) },
                                cleanup: { $0.close() })
        #expect(setBox.contains(CK_E_IO))

        let pass = Self.sweep(setup: { Open("pass", frames: 1) }, op: { o in
            var b = Self.box
            var p: UInt32 = 0
            return ck_dataset_begin_pass(&p, o.ds, &b)
        }, cleanup: { $0.close() })
        #expect(pass.contains(CK_E_IO))

        let stream = Self.sweep(setup: { Open("stream", sync: true) }, op: { o in
            Self.depthMap { d, c in
                var pose = Self.identity, k = Self.intrinsics
                return ck_dataset_stream_frame(o.ds, 0, &pose, &k, d, c)
            }
        }, cleanup: { $0.close() })
        #expect(stream.contains(CK_E_IO))

        let log = Self.sweep(setup: { Open("log") }, op: { o in
            var e = ck_event(code: Int32(CK_EVENT_SLOW_DOWN.rawValue), index: -1, timestamp: 1, value: 0.5, reserved: 0, text: nil)
            return ck_dataset_log_event(o.ds, &e)
        }, cleanup: { $0.close() })
        #expect(log.contains(CK_E_IO))

        let finalize = Self.sweep(setup: { Open("finalize", frames: 1) }, op: { ck_dataset_finalize($0.ds, 0, nil) },
                                  cleanup: { $0.close() })
        #expect(finalize.contains(CK_E_IO))

        // close and cancel free the handle whatever they report.
        let close = Self.sweep(setup: { Open("close", frames: 1) }, op: { o in
            let s = ck_dataset_close(o.ds)
            o.ds = nil
            return s
        })
        #expect(close.contains(CK_E_IO))

        let cancel = Self.sweep(setup: { Open("cancel", frames: 1) }, op: { o in
            let s = ck_dataset_cancel(o.ds)
            o.ds = nil
            return s
        })
        #expect(cancel.contains(CK_E_IO))
    }

    @Test func readersReportAFailingDiskAsIO() throws {
        let box = Self.sweep(setup: { () -> Open in
            let o = Open("boxread")
            var b = Self.box
            #expect(ck_dataset_set_box(o.ds, &b) == CK_OK)
            o.close()
            return o
        }, op: { o in
            var b = ck_box()
            return ck_box_read(&b, o.root.dataset + "/boundingbox.json", 0)
        })
        #expect(box.contains(CK_E_IO) && box.contains(CK_OK))

        let png = Self.sweep(setup: { () -> Root in
            let root = Root("pnginfo")
            let s = Self.gray.withUnsafeBufferPointer { g in
                var img = ck_image(data: g.baseAddress, width: Self.w, height: Self.h, stride: 0, format: Int32(CK_IMAGE_FORMAT_GRAY8.rawValue), reserved: 0)
                return ck_png_write(root.file("a.png"), &img, 0, 0)
            }
            #expect(s == CK_OK)
            return root
        }, op: { root in
            var pw: UInt32 = 0, ph: UInt32 = 0
            var f: Int32 = 0
            return ck_png_read_info(&pw, &ph, &f, root.file("a.png"))
        })
        #expect(png.contains(CK_E_IO) && png.contains(CK_OK))
    }

    // MARK: depth files

    /// A .ckdepth file with `frames` frames, and a MultiScan stream made from it.
    static func recordings(_ root: Root, frames: Int = 2) -> Bool {
        var w: OpaquePointer?
        guard ck_depth_writer_open(&w, root.file("d.ckdepth"), Self.w, Self.h, Int32(CK_DEPTH_KIND_FLOAT16.rawValue), 0, 0) == CK_OK else { return false }
        for i in 0..<frames {
            #expect(depthMap { d, _ in ck_depth_writer_append(w, d, Double(i)) } == CK_OK)
        }
        var n: UInt64 = 0
        return ck_depth_writer_close(w) == CK_OK
            && ck_transcode_ckdepth_to_zstream(&n, root.file("d.depth.zlib"), root.file("d.ckdepth"), 0, CK_ZSTREAM_INDEX) == CK_OK
    }

    final class Writer {
        let root: Root
        var w: OpaquePointer?
        init(_ name: String, frames: Int) {
            root = Root(name)
            #expect(ck_depth_writer_open(&w, root.file("d.ckdepth"), ABIStatusTests.w, ABIStatusTests.h,
                                         Int32(CK_DEPTH_KIND_FLOAT16.rawValue), 0, 0) == CK_OK)
            for i in 0..<frames { #expect(ABIStatusTests.depthMap { d, _ in ck_depth_writer_append(w, d, Double(i)) } == CK_OK) }
        }
        func close() { _ = ck_depth_writer_close(w); w = nil }
    }

    @Test func depthWritersReportAFailingDiskAsIOThenRefuse() {
        let append = Self.sweep(setup: { Writer("append", frames: 1) }, op: { wr in
            Self.depthMap { d, _ in ck_depth_writer_append(wr.w, d, 5) }
        }, cleanup: { $0.close() })
        #expect(append.contains(CK_E_IO))

        // After a failed write the writer refuses further frames (CK_E_STATE) until reopened.
        let wr = Writer("refuse", frames: 1)
        var failed = false
        for n in 1...20 where !failed {
            FileIO.failCall(after: n)
            let s = Self.depthMap { d, _ in ck_depth_writer_append(wr.w, d, Double(n)) }
            FileIO.stopFailing()
            failed = s == CK_E_IO
        }
        #expect(failed)
        #expect(Self.depthMap { d, _ in ck_depth_writer_append(wr.w, d, 100) } == CK_E_STATE)
        #expect(String(cString: ck_last_error_message()).contains("earlier write failed"))
        wr.close()

        let flush = Self.sweep(setup: { Writer("flush", frames: 1) }, op: { ck_depth_writer_flush($0.w) }, cleanup: { $0.close() })
        #expect(flush.contains(CK_E_IO))
        let close = Self.sweep(setup: { Writer("close", frames: 1) }, op: { wr in
            let s = ck_depth_writer_close(wr.w)
            wr.w = nil
            return s
        })
        #expect(close.contains(CK_E_IO))
    }

    @Test func depthReadersReportAFailingDiskAsIO() {
        let n = Int(Self.w * Self.h)
        var out = [UInt16](repeating: 0, count: n)
        var f32 = [Float](repeating: 0, count: n)
        let reader = Self.sweep(setup: { () -> (Root, OpaquePointer?) in
            let root = Root("ckread")
            #expect(Self.recordings(root))
            var r: OpaquePointer?
            #expect(ck_depth_reader_open(&r, root.file("d.ckdepth")) == CK_OK)
            return (root, r)
        }, op: { root, r in
            var t = 0.0
            return ck_depth_reader_read(&out, n * 2, nil, &t, r, 1, Int32(CK_FORMAT_DEPTH_F16.rawValue))
        }, cleanup: { #expect(ck_depth_reader_close($0.1) == CK_OK) })
        #expect(reader.contains(CK_E_IO) && reader.contains(CK_OK))

        func zsweep(_ name: String, _ op: @escaping (OpaquePointer?) -> ck_status) -> Set<ck_status> {
            Self.sweep(setup: { () -> (Root, OpaquePointer?) in
                let root = Root(name)
                #expect(Self.recordings(root))
                var r: OpaquePointer?
                #expect(ck_zstream_reader_open(&r, root.file("d.depth.zlib"), Self.w, Self.h, Int32(CK_FORMAT_DEPTH_F16.rawValue)) == CK_OK)
                return (root, r)
            }, op: { op($0.1) }, cleanup: { #expect(ck_zstream_reader_close($0.1) == CK_OK) })
        }
        #expect(zsweep("zcount") { r in var c: UInt64 = 0; return ck_zstream_reader_frame_count(&c, r) }.contains(CK_E_IO))
        #expect(zsweep("znext") { r in ck_zstream_reader_next(&f32, n * 4, nil, r, Int32(CK_FORMAT_DEPTH_F32.rawValue)) }.contains(CK_E_IO))
        #expect(zsweep("zread") { r in ck_zstream_reader_read(&f32, n * 4, nil, r, 1, Int32(CK_FORMAT_DEPTH_F32.rawValue)) }.contains(CK_E_IO))
    }

    @Test func transcodingReportsEveryPromisedStatus() {
        let root = Root("transcode")
        #expect(Self.recordings(root))
        var frames: UInt64 = 0
        let ck = root.file("d.ckdepth"), z = root.file("d.depth.zlib")
        // The destination exists (no CK_OPEN_OVERWRITE).
        #expect(ck_transcode_ckdepth_to_zstream(&frames, z, ck, 0, 0) == CK_E_EXISTS)
        // A damaged source.
        _ = FileManager.default.createFile(atPath: root.file("junk.ckdepth"), contents: Data(repeating: 0x5a, count: 200))
        #expect(ck_transcode_ckdepth_to_zstream(&frames, root.file("j.zlib"), root.file("junk.ckdepth"), 0, 0) == CK_E_CORRUPT)
        // zstream → ckdepth: missing source, damaged source (a first DEFLATE block of the reserved
        // type 3), NULL path.
        #expect(ck_transcode_zstream_to_ckdepth(&frames, root.file("o.ckdepth"), root.file("missing.zlib"), Self.w, Self.h,
                                                Int32(CK_FORMAT_DEPTH_F16.rawValue), nil, 0, 0) == CK_E_NOT_FOUND)
        _ = FileManager.default.createFile(atPath: root.file("junk.zlib"), contents: Data(repeating: 0xff, count: 200))
        #expect(ck_transcode_zstream_to_ckdepth(&frames, root.file("o.ckdepth"), root.file("junk.zlib"), Self.w, Self.h,
                                                Int32(CK_FORMAT_DEPTH_F16.rawValue), nil, 0, 0) == CK_E_CORRUPT)
        #expect(!FileManager.default.fileExists(atPath: root.file("o.ckdepth")))  // nothing written
        #expect(ck_transcode_zstream_to_ckdepth(&frames, nil, z, Self.w, Self.h, Int32(CK_FORMAT_DEPTH_F16.rawValue), nil, 0, 0) == CK_E_INVALID_ARGUMENT)
        #expect(String(cString: ck_last_error_message()).contains("dst_path"))

        let toZ = Self.sweep(setup: { () -> Root in let r = Root("toz"); #expect(Self.recordings(r)); return r }, op: { r in
            ck_transcode_ckdepth_to_zstream(&frames, r.file("out.zlib"), r.file("d.ckdepth"), 0, 0)
        })
        #expect(toZ.contains(CK_E_IO) && toZ.contains(CK_OK))
        let toCK = Self.sweep(setup: { () -> Root in let r = Root("tock"); #expect(Self.recordings(r)); return r }, op: { r in
            ck_transcode_zstream_to_ckdepth(&frames, r.file("out.ckdepth"), r.file("d.depth.zlib"), Self.w, Self.h,
                                            Int32(CK_FORMAT_DEPTH_F16.rawValue), nil, 0, 0)
        })
        #expect(toCK.contains(CK_E_IO) && toCK.contains(CK_OK))
    }

    // MARK: sessions

    @Test func sessionCallsReportAFailingDiskAsIO() {
        let create = Self.sweep(setup: { Root("screate") }, op: { root in
            var s: OpaquePointer?
            var b = Self.box
            let st = Self.createSession(&s, root.dataset, &b)
            _ = ck_session_close(s)
            return st
        })
        #expect(create.contains(CK_E_IO) && create.contains(CK_OK))

        let process = Self.sweep(setup: { Sess("sprocess", frames: 1) }, op: { s in
            var r = ck_session_result()
            return Self.sessionFrame(1) { ck_session_process(&r, s.s, $0) }
        }, cleanup: { $0.close() })
        #expect(process.contains(CK_E_IO))

        let setBox = Self.sweep(setup: { Sess("ssetbox") }, op: { s in var b = Self.box; return ck_session_set_box(s.s, &b) },
                                cleanup: { $0.close() })
        #expect(setBox.contains(CK_E_IO))

        let pass = Self.sweep(setup: { Sess("spass", frames: 2) }, op: { s in
            var b = Self.box
            var p: UInt32 = 0
            return ck_session_begin_pass(&p, s.s, &b)
        }, cleanup: { $0.close() })
        #expect(pass.contains(CK_E_IO) && pass.contains(CK_OK))

        let finish = Self.sweep(setup: { Sess("sfinish", frames: 2) }, op: { ck_session_finish($0.s, 0, nil) },
                                cleanup: { $0.close() })
        #expect(finish.contains(CK_E_IO))

        let close = Self.sweep(setup: { Sess("sclose", frames: 2) }, op: { s in
            let st = ck_session_close(s.s)
            s.s = nil
            return st
        })
        #expect(close.contains(CK_E_IO))

        // Resuming reads the journal, checks and cuts the streams, reads the camera info back.
        let resume = Self.sweep(setup: { () -> Sess in let s = Sess("sresume", frames: 3); s.close(); return s }, op: { s in
            ck_session_resume(&s.s, s.root.dataset, nil)
        }, cleanup: { $0.close() })
        #expect(resume.contains(CK_E_IO) && resume.contains(CK_OK))
    }

    @Test func sessionStatesAndCollisions() throws {
        // A missing parent folder is CK_E_NOT_FOUND, as for ck_dataset_create.
        let root = Root("sstates")
        var s: OpaquePointer?
        var b = Self.box
        #expect(Self.createSession(&s, root.file("no/such/parent"), &b) == CK_E_NOT_FOUND)
        #expect(s == nil)

        let sess = Sess("sfinished", frames: 2)
        // The zip exists: never overwritten.
        let zip = sess.root.file("taken.zip")
        _ = FileManager.default.createFile(atPath: zip, contents: Data("x".utf8))
        #expect(ck_session_finish(sess.s, CK_FINALIZE_ZIP, zip) == CK_E_EXISTS)
        #expect(try Data(contentsOf: URL(fileURLWithPath: zip)) == Data("x".utf8))
        #expect(ck_session_finish(sess.s, 0, nil) == CK_OK)
        // A finished session takes no more frames, no new box and no new pass.
        #expect(ck_session_set_box(sess.s, &b) == CK_E_STATE)
        var p: UInt32 = 7
        #expect(ck_session_begin_pass(&p, sess.s, &b) == CK_E_STATE && p == 7)
        #expect(ck_session_begin_pass(&p, sess.s, nil) == CK_E_INVALID_ARGUMENT)
        #expect(String(cString: ck_last_error_message()).contains("box"))
        var r = ck_session_result()
        #expect(Self.sessionFrame(5) { ck_session_process(&r, sess.s, $0) } == CK_E_STATE)
        sess.close()
    }

    @Test func sceneCreateRefusesNull() {
        #expect(ck_scene_create(nil, 1) == CK_E_INVALID_ARGUMENT)
        #expect(String(cString: ck_last_error_message()).contains("scene_out"))
    }
}
#endif
