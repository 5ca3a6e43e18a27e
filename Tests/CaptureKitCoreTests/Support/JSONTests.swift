import Foundation
import Testing
@testable import CaptureKitCore

/// The json-c wrapper: bit-exact numbers, escaping, layout, malformed input, fault injection.
@Suite struct JSONTests {
    func text(_ value: JSONValue, pretty: Bool = false) throws -> String {
        String(decoding: try JSON.serialize(value, pretty: pretty), as: UTF8.self)
    }

    /// Random finite floats over every exponent (bit patterns), plus the edge values.
    func floats(_ n: Int, seed: UInt64) -> [Float] {
        var rng = SplitMix64(seed: seed)
        var out: [Float] = [0, -0.0, 1, -1, 0.1, 1e-5, 16777216, Float(bitPattern: 0x4B80_0001), .ulpOfOne, .leastNonzeroMagnitude,
                            -.leastNonzeroMagnitude, .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
                            .pi, Float(bitPattern: 1), 3.4028235e38, 0.99999994]
        while out.count < n {
            let f = Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
            if f.isFinite { out.append(f) }
            out.append(rng.float(-10...10))
        }
        return out
    }

    @Test func floatsReadBackBitExactly() throws {
        for pretty in [false, true] {
            let values = floats(200_000, seed: pretty ? 1 : 2)
            let bytes = try JSON.serialize(.floats(values), pretty: pretty)
            let back = try JSONNode(try JSON.parse(bytes, what: "t")).floats(count: values.count)
            for (i, (a, b)) in zip(values, back).enumerated() where a.bitPattern != b.bitPattern {
                Issue.record("float \(i): wrote \(a) (\(a.bitPattern)), read \(b) (\(b.bitPattern))")
                break
            }
            // Python's json reads these texts too: each is a valid JSON number.
            let parsed = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [NSNumber])
            #expect(parsed.count == values.count)
        }
    }

    @Test func shortestTextIsWritten() throws {
        #expect(try text(.floats([0.1, 1, -0.0, 1e-5, 3.4028235e38, 16777216])) == "[0.1,1.0,-0.0,1e-05,3.4028235e+38,16777216.0]")
        #expect(try text(.doubles([0.1, 0.001, 16219.261195416])) == "[0.1,0.001,16219.261195416]")
        #expect(try text(.ints([0, -5, Int64.max, Int64.min])) == "[0,-5,9223372036854775807,-9223372036854775808]")
    }

    @Test func doublesAndIntsReadBackExactly() throws {
        var rng = SplitMix64(seed: 3)
        var doubles: [Double] = [0, -0.0, .pi, .greatestFiniteMagnitude, .leastNonzeroMagnitude, 0.1, 1e300, -1e-300]
        for _ in 0..<100_000 {
            let d = Double(bitPattern: rng.next())
            if d.isFinite { doubles.append(d) }
        }
        let back = try JSONNode(try JSON.parse(try JSON.serialize(.doubles(doubles), pretty: false), what: "t")).array()
        for (a, b) in zip(doubles, back) { #expect(a.bitPattern == (try b.double()).bitPattern, "\(a)") }
        let ints: [Int64] = [0, 1, -1, Int64.max, Int64.min, 1 << 53 + 1, 280670466266040]
        let ib = try JSONNode(try JSON.parse(try JSON.serialize(.ints(ints), pretty: true), what: "t")).array()
        #expect(try ib.map { try $0.int64() } == ints)
    }

    @Test func nonFiniteNumbersAreRejectedNamingTheKey() throws {
        let doc = JSONValue.object(JSONObject([("a", .object(JSONObject([("b", .floats([1, 2, .nan]))])))]))
        let e = try #require(throws: CaptureKitError.self) { try JSON.serialize(doc, pretty: true) }
        #expect(e.status == .invalidArgument && e.message.hasPrefix("a.b[2]: "), "\(e)")
        for bad: JSONValue in [.float(.infinity), .double(-.infinity), .double(.nan), .number("1e"), .number("NaN"), .number("01")] {
            #expect(throws: CaptureKitError.self) { try JSON.serialize(.array([bad]), pretty: false) }
        }
    }

    @Test func numberGrammar() {
        for good in ["0", "-0", "1.5", "-1.5e10", "1E+2", "0.000", "123e-05"] { #expect(JSON.isNumberLiteral(good), "\(good)") }
        for bad in ["", "-", "01", "1.", ".5", "1e", "1e+", "+1", "inf", "nan", "0x10", "1 ", "1.5.5"] {
            #expect(!JSON.isNumberLiteral(bad), "\(bad)")
        }
    }

    @Test func stringsAreEscapedAsReadersExpect() throws {
        let s = "q\"b\\s/n\nt\tr\rc\u{01}\u{1f}d\u{7f}é😀\u{2028}z\u{0}end"
        let t = try text(.array([.string(s)]))
        #expect(t == "[\"q\\\"b\\\\s/n\\nt\\tr\\rc\\u0001\\u001fd\u{7f}é😀\u{2028}z\\u0000end\"]", "\(t)")
        let back = try JSONNode(try JSON.parse(Array(t.utf8), what: "t")).array()[0].string()
        #expect(back == s)
        // Foundation (an independent reader) agrees.
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(t.utf8)) as? [String])
        #expect(parsed == [s])
        // Escaped slashes and \u escapes from other writers read back.
        #expect(try JSONNode(try JSON.parse(Array(#""a\/b\u00e9\ud83d\ude00""#.utf8), what: "t")).string() == "a/bé😀")
    }

    @Test func prettyLayoutAndKeyOrder() throws {
        var o = JSONObject()
        o["z"] = .int(1)
        o["a"] = .array([.float(0.5), .string("x/y")])
        o["m"] = .object(JSONObject())
        o["n"] = .null
        o["b"] = .bool(true)
        o["z"] = .int(2)  // replaced in place
        #expect(try text(.object(o), pretty: true) == """
        {
          "z": 2,
          "a": [
            0.5,
            "x/y"
          ],
          "m": {
          },
          "n": null,
          "b": true
        }
        """)
        #expect(try text(.object(o)) == #"{"z":2,"a":[0.5,"x/y"],"m":{},"n":null,"b":true}"#)
        let back = try JSON.parse(try JSON.serialize(.object(o), pretty: true), what: "t")
        guard case .object(let bo) = back else { Issue.record("not an object"); return }
        #expect(bo.keys == ["z", "a", "m", "n", "b"])
        o["m"] = nil
        #expect(o.keys == ["z", "a", "n", "b"])
    }

    @Test func topLevelScalarsAndWhitespace() throws {
        #expect(try JSON.parse(Array(" null \n".utf8), what: "t") == .null)
        #expect(try JSON.parse(Array("5".utf8), what: "t") == .int(5))
        #expect(try JSON.parse(Array("\t[1]\r\n".utf8), what: "t") == .array([.int(1)]))
        #expect(try JSON.parse(Array("2.50".utf8), what: "t") == .number("2.50"))
    }

    @Test func malformedInputIsCorruptWithAPosition() throws {
        let cases = ["", "   ", "{", "{\"a\":1,}", "{\"a\" 1}", "[1,2", "{\"a\":1} x", "{\"a\":1}{}", "[\"\u{1}\" 1]",
                     "{\"a\": -}", "{\"a\": 01}", "[1]\0", "{\"a\":\"\\x\"}", "tru", "nul", "[1,,2]", "{1:2}"]
        for c in cases {
            let e = try #require(throws: CaptureKitError.self, "\(c.debugDescription)") { try JSON.parse(Array(c.utf8), what: "doc.json") }
            #expect(e.status == .corrupt && e.message.hasPrefix("doc.json: line "), "\(c.debugDescription): \(e)")
        }
        // Invalid UTF-8 in a string.
        #expect(throws: CaptureKitError.self) { try JSON.parse([0x5B, 0x22, 0xFF, 0x22, 0x5D], what: "t") }
        // Nesting beyond the limit.
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: CaptureKitError.self) { try JSON.parse(Array(deep.utf8), what: "t") }
        // The line and column point at the error.
        let e = try #require(throws: CaptureKitError.self) { try JSON.parse(Array("{\n  \"a\": 1,\n  \"b\": ?\n}".utf8), what: "f") }
        #expect(e.message.hasPrefix("f: line 3, column 8"), "\(e)")
    }

    @Test func everyTruncationIsCorrupt() throws {
        var o = JSONObject()
        o["name"] = .string("é\"x/\n")
        o["m"] = .array([.floats([1.5, -2, 3e-7]), .ints([1, 22, 333])])
        o["t"] = .double(16219.261195416)
        o["ok"] = .bool(false)
        o["none"] = .null
        for pretty in [false, true] {
            let bytes = try JSON.serialize(.object(o), pretty: pretty)
            for n in 0..<bytes.count {
                let e = try #require(throws: CaptureKitError.self, "prefix \(n)") { try JSON.parse(Array(bytes[0..<n]), what: "t") }
                #expect(e.status == .corrupt, "prefix \(n): \(e)")
            }
            _ = try JSON.parse(bytes, what: "t")
        }
    }

    @Test func gettersNameTheKeyPath() throws {
        let doc = #"{"frames":[{},{},{},{"transform_matrix":[[1,0,0,0],[0,1,0,0],[0,"x",1,0],[0,0,0,1]],"w":1.5,"s":3}]}"#
        let root = JSONNode(try JSON.parse(Array(doc.utf8), what: "t"))
        let frame = try root.key("frames").array()[3]
        let cell = try frame.key("transform_matrix").array(count: 4)[2].array(count: 4)[1]
        let e = try #require(throws: CaptureKitError.self) { try cell.float() }
        #expect(e.status == .corrupt && e.message == "frames[3].transform_matrix[2][1]: expected a number")
        let missing = try #require(throws: CaptureKitError.self) { try root.key("frames").array()[1].key("file_path") }
        #expect(missing.message == "frames[1].file_path: missing")
        let notInt = try #require(throws: CaptureKitError.self) { try frame.key("w").int64() }
        #expect(notInt.message.hasPrefix("frames[3].w: "))
        #expect(throws: CaptureKitError.self) { try frame.key("s").string() }
        let wrongCount = try #require(throws: CaptureKitError.self) { try frame.key("transform_matrix").array(count: 3) }
        #expect(wrongCount.message == "frames[3].transform_matrix: expected an array of 3 (got 4)")
        let top = try #require(throws: CaptureKitError.self) { try JSONNode(.array([])).key("a") }
        #expect(top.message == "(top level): expected an object")
        // Numbers beyond the Float range, and the NaN/Infinity literals json-c lets through.
        for lit in ["1e39", "NaN", "Infinity", "-Infinity", "1e400"] {
            let v = try JSON.parse(Array("[\(lit)]".utf8), what: "t")
            #expect(throws: CaptureKitError.self, "\(lit)") { try JSONNode(v).array()[0].float() }
        }
        #expect(throws: CaptureKitError.self) { try JSONNode(.int(5)).int(in: 0...4) }
        #expect(try JSONNode(.number("3.0")).int64() == 3)
    }

    @Test func jsonLinesWithATornTail() throws {
        let good = "{\"a\":1}\n\n{\"a\":2}\r\n"
        let r = try JSON.parseLines(Array(good.utf8), what: "x.jsonl")
        #expect(r.values.map(\.line) == [1, 3] && !r.tornTail)
        let torn = good + "{\"a\":3,\"b"
        let e = try #require(throws: CaptureKitError.self) { try JSON.parseLines(Array(torn.utf8), what: "x.jsonl") }
        #expect(e.message.hasPrefix("x.jsonl: line 4, "), "\(e)")
        let t = try JSON.parseLines(Array(torn.utf8), what: "x.jsonl", tolerateTornTail: true)
        #expect(t.values.count == 2 && t.tornTail)
        // A bad line that is terminated is an error even when tolerating a torn tail.
        #expect(throws: CaptureKitError.self) { try JSON.parseLines(Array("{\"a\":1}\n{x}\n{\"a\":2}".utf8), what: "x", tolerateTornTail: true) }
        // A complete last line without "\n" is accepted.
        #expect(try JSON.parseLines(Array("{\"a\":1}\n{\"a\":2}".utf8), what: "x").values.count == 2)
        #expect(try JSON.line(.object(JSONObject([("a", .int(1))]))) == Array("{\"a\":1}\n".utf8))
    }

    @Test func keysWithNULAreRejected() {
        #expect(throws: CaptureKitError.self) { try JSON.serialize(.object(JSONObject([("a\u{0}b", .int(1))])), pretty: false) }
    }

    /// Fail the Nth json-c allocation for every N: a clean `noMemory`, then success once N passes the count.
    @Test func faultInjectionEveryAllocation() throws {
        var o = JSONObject()
        o["s"] = .string("x"); o["e"] = .string(""); o["a"] = .array([.float(1), .int(2), .null, .bool(true), .double(0.5)])
        o["o"] = .object(JSONObject([("k", .number("1.25"))]))
        let doc = JSONValue.object(o)
        let expected = try JSON.serialize(doc, pretty: true)
        var failures = 0
        for n in 1...200 {
            JSON.failCall(after: n)
            defer { JSON.stopFailing() }
            do {
                let bytes = try JSON.serialize(doc, pretty: true)
                #expect(bytes == expected)
                break
            } catch {
                #expect(error.status == .noMemory, "n=\(n): \(error)")
                failures += 1
            }
        }
        #expect(failures >= 12, "every allocation site was reached: \(failures)")
        for n in 1...2 {
            JSON.failCall(after: n)
            defer { JSON.stopFailing() }
            let e = try #require(throws: CaptureKitError.self) { try JSON.parse(expected, what: "t") }
            #expect(e.status == .noMemory)
        }
        #expect(try JSON.parse(expected, what: "t") != .null)
    }
}
