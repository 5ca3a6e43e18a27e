/// A UTC calendar date and time of day (proleptic Gregorian calendar, no leap seconds), converted
/// from and to Unix time without Foundation and without reading a clock: callers pass the time.
///
/// Used for the MultiScan scan id and the ZIP entries' DOS timestamps.
public struct CivilTime: Equatable, Sendable {
    public var year: Int64
    /// 1...12
    public var month: Int
    /// 1...31
    public var day: Int
    /// 0...23
    public var hour: Int
    /// 0...59
    public var minute: Int
    /// 0...59
    public var second: Int

    public init(year: Int64, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year; self.month = month; self.day = day
        self.hour = hour; self.minute = minute; self.second = second
    }

    /// The UTC date and time of `unixSeconds` (seconds since 1970-01-01T00:00:00Z; negative before).
    /// Every Int64 value converts (years far outside 0...9999 included).
    public init(unixSeconds: Int64) {
        // Floor division, so times before 1970 land on the right day.
        var days = unixSeconds / 86_400
        var rest = unixSeconds % 86_400
        if rest < 0 { rest += 86_400; days -= 1 }
        // Civil from days (H. Hinnant's algorithm): eras of 400 years = 146,097 days, from 0000-03-01.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097                                       // [0, 146096]
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365  // [0, 399]
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)                  // [0, 365]
        let mp = (5 * doy + 2) / 153                                       // [0, 11], March = 0
        let d = doy - (153 * mp + 2) / 5 + 1                               // [1, 31]
        let m = mp < 10 ? mp + 3 : mp - 9                                  // [1, 12]
        self.init(year: yoe + era * 400 + (m <= 2 ? 1 : 0), month: Int(m), day: Int(d),
                  hour: Int(rest / 3_600), minute: Int(rest % 3_600 / 60), second: Int(rest % 60))
    }

    /// Seconds since 1970-01-01T00:00:00Z (the inverse of `init(unixSeconds:)` for valid fields and
    /// years within ±10^12).
    public var unixSeconds: Int64 {
        let y = year - (month <= 2 ? 1 : 0)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        // Wrapping arithmetic: out-of-range years give a wrong number, never a trap.
        let days = era &* 146_097 &+ doe &- 719_468
        return days &* 86_400 &+ Int64(hour &* 3_600 &+ minute &* 60 &+ second)
    }

    /// `yyyyMMdd'T'HHmmss` (the year zero-padded to 4 digits; callers limit it to 0...9999).
    var compactText: String {
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(year, 4) + pad(Int64(month), 2) + pad(Int64(day), 2) + "T"
            + pad(Int64(hour), 2) + pad(Int64(minute), 2) + pad(Int64(second), 2)
    }
}
