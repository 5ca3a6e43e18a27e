/// A 4×4 matrix of `Float`, stored as four columns (column-major, like simd and `ck_mat4`).
public struct Matrix4: Equatable, Sendable {
    public var columns: (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)

    public init(_ c0: SIMD4<Float>, _ c1: SIMD4<Float>, _ c2: SIMD4<Float>, _ c3: SIMD4<Float>) {
        columns = (c0, c1, c2, c3)
    }

    public static let identity = Matrix4(SIMD4(1, 0, 0, 0), SIMD4(0, 1, 0, 0), SIMD4(0, 0, 1, 0), SIMD4(0, 0, 0, 1))

    /// Builds a matrix from 16 column-major values (`m[c * 4 + r]`); `values` must hold 16 elements.
    public init(columnMajor values: [Float]) {
        func col(_ c: Int) -> SIMD4<Float> {
            values.count == 16 ? SIMD4(values[c * 4], values[c * 4 + 1], values[c * 4 + 2], values[c * 4 + 3]) : .zero
        }
        self.init(col(0), col(1), col(2), col(3))
    }

    /// The 16 values, column-major.
    public var columnMajor: [Float] {
        let (a, b, c, d) = columns
        return [a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w]
    }

    /// Column `c` (0...3); other indices give zero.
    public func column(_ c: Int) -> SIMD4<Float> {
        switch c {
        case 0: return columns.0
        case 1: return columns.1
        case 2: return columns.2
        case 3: return columns.3
        default: return .zero
        }
    }

    /// Element at (row, column).
    public subscript(row: Int, column: Int) -> Float {
        let c = self.column(column)
        return (0..<4).contains(row) ? c[row] : 0
    }

    public static func == (a: Matrix4, b: Matrix4) -> Bool {
        a.columns.0 == b.columns.0 && a.columns.1 == b.columns.1 && a.columns.2 == b.columns.2 && a.columns.3 == b.columns.3
    }

    public static func * (a: Matrix4, b: Matrix4) -> Matrix4 {
        func mul(_ v: SIMD4<Float>) -> SIMD4<Float> {
            a.columns.0 * v.x + a.columns.1 * v.y + a.columns.2 * v.z + a.columns.3 * v.w
        }
        return Matrix4(mul(b.columns.0), mul(b.columns.1), mul(b.columns.2), mul(b.columns.3))
    }

    public var transposed: Matrix4 {
        let (a, b, c, d) = columns
        return Matrix4(SIMD4(a.x, b.x, c.x, d.x), SIMD4(a.y, b.y, c.y, d.y),
                       SIMD4(a.z, b.z, c.z, d.z), SIMD4(a.w, b.w, c.w, d.w))
    }

    public var isFinite: Bool {
        let (a, b, c, d) = columns
        let all = [a, b, c, d]
        return all.allSatisfy { $0.x.isFinite && $0.y.isFinite && $0.z.isFinite && $0.w.isFinite }
    }

    /// The upper-left 3×3 columns (rotation of a rigid pose).
    public var axisX: Vec3 { Vec3(columns.0.x, columns.0.y, columns.0.z) }
    public var axisY: Vec3 { Vec3(columns.1.x, columns.1.y, columns.1.z) }
    public var axisZ: Vec3 { Vec3(columns.2.x, columns.2.y, columns.2.z) }
    /// Translation of a pose (column 3).
    public var translation: Vec3 { Vec3(columns.3.x, columns.3.y, columns.3.z) }

    /// Checks that the matrix is finite. - Throws: `invalidArgument` naming `name`.
    public func requireFinite(_ name: @autoclosure () -> String) throws(CaptureKitError) {
        guard isFinite else { throw .invalidArgument("\(name()) has a non-finite element") }
    }
}
