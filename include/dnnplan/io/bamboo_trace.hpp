#pragma once
// Readers of spot-instance traces and lifetimes (docs/models/preemption.md, "Readers"):
//   - parse_instance_trace: Bamboo's traces (uclasystem/bamboo traces/, p3-trace.csv,
//     g4dn-trace.csv; MIT): one event a line, `time_ms,add|remove,node`, sorted by time; several
//     events may share a time, and their order in the file is the order they happen in.
//   - parse_availability_trace: Bamboo's GCP counts (traces/gcloud/a100x1-east1b.txt,
//     v100x1-east1c.txt): `YYYY-MM-DD, HH:MM:SS, count`, one sample a line, NOT sorted in the
//     v100 file (its README: "sort before use"): the reader sorts the samples stably by time.
//   - parse_lifetimes: the preemptible-VM lifetimes of cake-lab/transient-deep-learning
//     (lifetime.csv; Apache-2.0): sections `K80,,` / `P100,,` / `V100,,`, an optional header
//     `VM name,Start,Terminate`, rows `name,M/D/YY H:MM,M/D/YY H:MM`.
// Blank lines are skipped and fields are trimmed of blanks (and of the CR of CRLF files). Every
// malformed line is a dnnplan::parse_error with where() = "line N" (1-based) and a message naming
// the field and what was expected. Times of day are read as UTC (the files do not say their time
// zone; only differences and hours of the file's clock are used), converted with the
// days-from-civil algorithm (no <ctime>, no time-zone database, no global state).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/text_lines.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/preemption/events.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

namespace dnnplan {

namespace detail::trace_csv {

using text_lines::fail;
using text_lines::split;
using text_lines::trim;
using text_lines::where;

/// Checks that line `number` is UTF-8 (it is echoed in messages), then passes it to the reader;
/// false when the reader wants no more lines.
template <class Reader>
[[nodiscard]] bool pass_line(Reader& reader, std::string_view text, std::int64_t number) {
    text_lines::require_utf8_line(text, number);
    if constexpr (std::is_same_v<decltype(reader.line(text, number)), bool>) return reader.line(text, number);
    else {
        reader.line(text, number);
        return true;
    }
}

/// Feeds the lines of `in` (1-based numbers) to reader.line(text, number) and returns its finish().
template <class Reader>
[[nodiscard]] auto read_lines(std::istream& in, Reader reader) {
    std::string text;
    std::int64_t number = 0;
    while (std::getline(in, text))
        if (!pass_line(reader, text, ++number)) break;
    return std::move(reader).finish();
}

/// The same for a text in memory (lines as std::getline cuts them: a final '\n' ends the last line).
template <class Reader>
[[nodiscard]] auto read_lines(std::string_view text, Reader reader) {
    std::int64_t number = 0;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view one = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        if (!pass_line(reader, one, ++number)) break;
    }
    return std::move(reader).finish();
}


/// Digits only (no sign, no blank), at most `max_digits`, as a non-negative integer.
[[nodiscard]] inline std::optional<std::int64_t> digits(std::string_view text, std::size_t min_digits,
                                                        std::size_t max_digits) noexcept {
    if (text.size() < min_digits || text.size() > max_digits) return std::nullopt;
    for (const char c : text)
        if (c < '0' || c > '9') return std::nullopt;
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

/// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (H. Hinnant, "chrono-Compatible
/// Low-Level Date Algorithms", days_from_civil): exact for every date, no library call.
[[nodiscard]] constexpr std::int64_t days_from_civil(std::int64_t y, std::int64_t m, std::int64_t d) noexcept {
    y -= m <= 2 ? 1 : 0;
    const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
    const std::int64_t yoe = y - era * 400;                                // [0, 399]
    const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
    const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;        // [0, 146096]
    return era * 146097 + doe - 719468;
}

[[nodiscard]] constexpr std::int64_t days_in_month(std::int64_t y, std::int64_t m) noexcept {
    constexpr std::array<std::int64_t, 12> days{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[static_cast<std::size_t>(m - 1)];
}

/// Seconds since 1970-01-01 00:00:00 for a valid civil date and time; none for an invalid one.
[[nodiscard]] inline std::optional<std::int64_t> civil_seconds(std::optional<std::int64_t> y, std::optional<std::int64_t> m,
                                                              std::optional<std::int64_t> d, std::optional<std::int64_t> hh,
                                                              std::optional<std::int64_t> mm,
                                                              std::optional<std::int64_t> ss) noexcept {
    if (!y || !m || !d || !hh || !mm || !ss) return std::nullopt;
    if (*m < 1 || *m > 12 || *d < 1 || *d > days_in_month(*y, *m) || *hh > 23 || *mm > 59 || *ss > 59) return std::nullopt;
    return days_from_civil(*y, *m, *d) * 86400 + *hh * 3600 + *mm * 60 + *ss;
}

/// Splits `text` at the separators, exactly parts.size() pieces; false otherwise.
template <std::size_t Count>
[[nodiscard]] bool cut(std::string_view text, char separator, std::array<std::string_view, Count>& parts) noexcept {
    for (std::size_t i = 0; i < Count; ++i) {
        const std::size_t at = text.find(separator);
        if ((at == std::string_view::npos) != (i + 1 == Count)) return false;
        parts[i] = text.substr(0, at);
        text.remove_prefix(at == std::string_view::npos ? text.size() : at + 1);
    }
    return true;
}

}  // namespace detail::trace_csv

// ---- Bamboo's event traces ----------------------------------------------------------------------

namespace detail::trace_csv {

class instance_trace_reader {
public:
    void line(std::string_view text, std::int64_t number) {
        text = trim(text);
        if (text.empty()) return;
        static constexpr std::array<std::string_view, 3> names{"time_ms", "event", "node"};
        const auto f = split(text, number, names);
        const auto time_ms = digits(f[0], 1, 18);  // 18 digits: below 2^63
        if (!time_ms) fail(number, "time_ms", "an integer >= 0 (milliseconds, at most 18 digits)", f[0]);
        const std::optional<instance_event_kind> kind = enum_from_string<instance_event_kind>(f[1]);
        if (!kind) fail(number, "event", enum_expected<instance_event_kind>(), f[1]);
        if (f[2].empty()) fail(number, "node", "a non-empty name", f[2]);
        if (!trace_.events.empty() && *time_ms < trace_.events.back().time_ms)
            fail(number, "time_ms",
                 "a time >= " + std::to_string(trace_.events.back().time_ms) + " (line " + std::to_string(lines_.back()) +
                     "'s: the events are unsorted)",
                 f[0]);
        trace_.events.push_back({.time_ms = *time_ms, .kind = *kind, .node = std::string(f[2])});
        lines_.push_back(number);
    }

    [[nodiscard]] instance_trace finish() && {
        const auto name = [&](std::size_t k) { return where(lines_[k]); };
        if (const auto problem = find_instance_event_problem(trace_.events, name))
            throw parse_error(where(lines_[problem->index]),
                              "field " + std::string(problem->field == "kind" ? "event" : problem->field) + ": expected " +
                                  problem->expected + ", found " + problem->value);
        return std::move(trace_);
    }

private:
    instance_trace trace_;
    std::vector<std::int64_t> lines_;  // the line of each event
};

}  // namespace detail::trace_csv

/// Reads a Bamboo trace (`time_ms,add|remove,node` a line, no header). Errors (parse_error,
/// where() = "line N"): not UTF-8; not 3 fields; time_ms not an integer >= 0; an event other
/// than add or remove; an empty node; a time before the previous line's (unsorted); an add of a
/// node that is live, a remove of one that is not (instance_trace::validate's rules).
[[nodiscard]] inline instance_trace parse_instance_trace(std::istream& in) {
    return detail::trace_csv::read_lines(in, detail::trace_csv::instance_trace_reader{});
}

[[nodiscard]] inline instance_trace parse_instance_trace(std::string_view text) {
    return detail::trace_csv::read_lines(text, detail::trace_csv::instance_trace_reader{});
}

// ---- Bamboo's GCP availability counts -----------------------------------------------------------

namespace detail::trace_csv {

class availability_reader {
public:
    void line(std::string_view text, std::int64_t number) {
        text = trim(text);
        if (text.empty()) return;
        static constexpr std::array<std::string_view, 3> names{"date", "time", "count"};
        const auto f = split(text, number, names);
        std::array<std::string_view, 3> date{}, hms{};
        const bool date_ok = cut(f[0], '-', date);
        const bool time_ok = cut(f[1], ':', hms);
        if (!date_ok || !civil_seconds(digits(date[0], 4, 4), digits(date[1], 2, 2), digits(date[2], 2, 2), 0, 0, 0))
            fail(number, "date", "a date YYYY-MM-DD", f[0]);
        if (!time_ok || !civil_seconds(1970, 1, 1, digits(hms[0], 2, 2), digits(hms[1], 2, 2), digits(hms[2], 2, 2)))
            fail(number, "time", "a time HH:MM:SS (00:00:00 to 23:59:59)", f[1]);
        const auto count = digits(f[2], 1, 10);
        if (!count || *count > 2147483647) fail(number, "count", "an integer in [0, 2147483647]", f[2]);
        const auto seconds = civil_seconds(digits(date[0], 4, 4), digits(date[1], 2, 2), digits(date[2], 2, 2),
                                           digits(hms[0], 2, 2), digits(hms[1], 2, 2), digits(hms[2], 2, 2));
        trace_.samples.push_back({.time_s = *seconds, .available = static_cast<std::int32_t>(*count)});
    }

    [[nodiscard]] availability_trace finish() && {
        // Stable: samples at the same time keep the file's order, and the last is the count from
        // then on (availability_trace).
        std::stable_sort(trace_.samples.begin(), trace_.samples.end(),
                         [](const availability_sample& a, const availability_sample& b) { return a.time_s < b.time_s; });
        return std::move(trace_);
    }

private:
    availability_trace trace_;
};

}  // namespace detail::trace_csv

/// Reads a GCP availability file (`YYYY-MM-DD, HH:MM:SS, count` a line, no header) and sorts the
/// samples stably by time. Errors (parse_error, where() = "line N"): not UTF-8; not 3 fields; a
/// date or time that is malformed or does not exist (2021-02-29, 24:00:00); a count that is not
/// an integer in [0, 2^31 - 1].
[[nodiscard]] inline availability_trace parse_availability_trace(std::istream& in) {
    return detail::trace_csv::read_lines(in, detail::trace_csv::availability_reader{});
}

[[nodiscard]] inline availability_trace parse_availability_trace(std::string_view text) {
    return detail::trace_csv::read_lines(text, detail::trace_csv::availability_reader{});
}

// ---- preemptible-VM lifetimes -------------------------------------------------------------------

/// One VM of lifetime.csv: created at start_s, terminated at terminate_s (seconds since
/// 1970-01-01 of the file's clock, read as UTC; minute resolution).
struct vm_lifetime {
    std::string name{};
    std::int64_t start_s = 0;
    std::int64_t terminate_s = 0;  ///< >= start_s
    std::int64_t line = 0;         ///< 1-based line in the file

    [[nodiscard]] double duration_h() const noexcept { return static_cast<double>(terminate_s - start_s) / 3600.0; }
    /// The start's hour of the day on the file's clock, in [0, 24).
    [[nodiscard]] double start_hour_of_day() const noexcept {
        const std::int64_t in_day = ((start_s % 86400) + 86400) % 86400;
        return static_cast<double>(in_day) / 3600.0;
    }
};

/// One section of lifetime.csv: a GPU type ("K80", "P100", "V100") and its VMs in file order.
struct lifetime_group {
    std::string name{};
    std::vector<vm_lifetime> vms{};
    std::int64_t line = 0;  ///< of the section line
};

namespace detail::trace_csv {

/// "M/D/YY H:MM" (month and day 1 or 2 digits, year 2 digits = 20YY or 4 digits, hour 1 or 2
/// digits, minutes 2 digits) as seconds since 1970-01-01.
[[nodiscard]] inline std::optional<std::int64_t> sheet_time(std::string_view text) noexcept {
    std::array<std::string_view, 2> date_time{};
    std::array<std::string_view, 3> date{};
    std::array<std::string_view, 2> hms{};
    if (!cut(text, ' ', date_time) || !cut(date_time[0], '/', date) || !cut(date_time[1], ':', hms)) return std::nullopt;
    std::optional<std::int64_t> year = date[2].size() == 2 ? digits(date[2], 2, 2) : digits(date[2], 4, 4);
    if (year && date[2].size() == 2) *year += 2000;
    return civil_seconds(year, digits(date[0], 1, 2), digits(date[1], 1, 2), digits(hms[0], 1, 2), digits(hms[1], 2, 2), 0);
}

class lifetime_reader {
public:
    /// False at the "Previous experiments" section: the reading stops there.
    bool line(std::string_view text, std::int64_t number) {
        text = trim(text);
        if (text.empty()) return true;
        static constexpr std::array<std::string_view, 3> names{"VM name", "Start", "Terminate"};
        const auto f = split(text, number, names);
        if (!f[0].empty() && f[1].empty() && f[2].empty()) {  // a section line "K80,,"
            if (f[0] == "Previous experiments") return false;
            for (const lifetime_group& g : groups_)
                if (g.name == f[0])
                    fail(number, "VM name", "a section name not used before (line " + std::to_string(g.line) + " has it)", f[0]);
            groups_.push_back({.name = std::string(f[0]), .vms = {}, .line = number});
            return true;
        }
        if (f == names) {
            if (groups_.empty() || !groups_.back().vms.empty())
                throw parse_error(where(number), "expected the header VM name,Start,Terminate only after a section line such as K80,,");
            return true;
        }
        if (groups_.empty())
            throw parse_error(where(number), "expected a section line such as K80,, before the first VM, found " + quoted_text(text));
        if (f[0].empty()) fail(number, "VM name", "a non-empty name", f[0]);
        const auto start = sheet_time(f[1]);
        if (!start) fail(number, "Start", "a date and time M/D/YY H:MM", f[1]);
        const auto end = sheet_time(f[2]);
        if (!end) fail(number, "Terminate", "a date and time M/D/YY H:MM", f[2]);
        if (*end < *start) fail(number, "Terminate", "a time at or after Start (" + std::string(f[1]) + ")", f[2]);
        groups_.back().vms.push_back({.name = std::string(f[0]), .start_s = *start, .terminate_s = *end, .line = number});
        return true;
    }

    [[nodiscard]] std::vector<lifetime_group> finish() && { return std::move(groups_); }

private:
    std::vector<lifetime_group> groups_;
};

}  // namespace detail::trace_csv

/// Reads lifetime.csv (cake-lab/transient-deep-learning, data/lifetime; runs of February 2019):
/// the sections in file order, each `NAME,,` then an optional header `VM name,Start,Terminate`
/// (the V100 section has none) and rows `name,M/D/YY H:MM,M/D/YY H:MM`. A section line
/// `Previous experiments,,` ends the reading: what follows (runs of May and June 2018) gives times
/// of day without dates (`8-May,created,terminated`, then `test0,09:49:51,10:28:22`, a VM
/// terminated after midnight showing an earlier time), mixes CPU-only VMs (the `test` rows,
/// n1-standard-4 without GPU per the folder's README) with K80 ones, and is not read.
/// Errors (parse_error, where() = "line N"): not UTF-8; not 3 fields; a VM before any section;
/// a section name used twice; the header elsewhere than right after a section line; an empty
/// name; a Start or Terminate that is malformed or does not exist; Terminate before Start.
[[nodiscard]] inline std::vector<lifetime_group> parse_lifetimes(std::istream& in) {
    return detail::trace_csv::read_lines(in, detail::trace_csv::lifetime_reader{});
}

[[nodiscard]] inline std::vector<lifetime_group> parse_lifetimes(std::string_view text) {
    return detail::trace_csv::read_lines(text, detail::trace_csv::lifetime_reader{});
}

/// How VM records become lifetime observations.
struct lifetime_censoring {
    /// A VM that ran at least this long was ended by GCP's limit on preemptible VMs (24 h), not by
    /// a preemption: it is right-censored at its recorded duration. Shorter VMs were preempted.
    double limit_h = 24.0;

    void validate(std::string_view path = "censoring") const {
        detail::require_positive(detail::field_prefix(path) + "limit_h", limit_h);
    }
};

/// The VMs as lifetime observations: duration_h = (terminate - start) in hours, preempted when
/// shorter than censoring.limit_h (right-censored otherwise), start_hour_of_day from Start.
/// Why censored and not dropped: a VM ended by the 24 h limit survived the market for as long
/// as it ran, which is what the censored likelihood term says (the cause-specific hazard of
/// preemption, with the limit a competing cause). In lifetime.csv no duration falls in
/// [23.66 h, 24.04 h): the split is the same for any limit in that range.
[[nodiscard]] inline std::vector<lifetime_observation> lifetime_observations(std::span<const vm_lifetime> vms,
                                                                            const lifetime_censoring& censoring = {}) {
    censoring.validate();
    std::vector<lifetime_observation> out;
    out.reserve(vms.size());
    for (const vm_lifetime& vm : vms) {
        const double hours = vm.duration_h();
        out.push_back({.duration_h = hours, .preempted = hours < censoring.limit_h, .start_hour_of_day = vm.start_hour_of_day()});
    }
    return out;
}

}  // namespace dnnplan
