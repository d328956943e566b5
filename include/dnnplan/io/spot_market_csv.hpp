#pragma once
// Reader of SkyNomad's spot availability CSV files (andylizf/skynomad-artifact,
// data/real/availability/2023-02-15/processed/<zone>_v100_1.csv; Apache-2.0): a header
// `date,availability`, then one probe a row, `YYYY-MM-DD HH:MM:SS,count`, times in UTC, rows about
// 195 s apart. The result is a spot_market_trace (preemption/spot_market.hpp) without prices (the
// prices are a side file: io/deadline_policy_json.hpp's parse_spot_price_table), and what the
// reader measured of the probing: the gap is the median of the differences between consecutive
// rows (the probes drift: 194, 195 and 196 s in the V100 files), reported with the smallest and
// largest difference so that a caller can see irregular probing before trusting the tick model.
//
// Polarity is never guessed: `available` files count the instances that could be launched (these
// CSVs: 1 available, 0 not); `preempted` files flag preempted probes (1 = unavailable, as in
// SkyNomad's converted JSON traces), read as 1 - value, and then only 0 and 1 are accepted.
//
// Blank lines are skipped and fields are trimmed of blanks (and of the CR of CRLF files). Every
// malformed line is a dnnplan::parse_error with where() = "line N" (1-based) and a message naming
// the field and the value. Times are converted with the days-from-civil algorithm of
// io/bamboo_trace.hpp (no <ctime>, no time-zone database, no locale).

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/text_lines.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/io/bamboo_trace.hpp>
#include <dnnplan/preemption/spot_market.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dnnplan {

/// What a trace file's values count: instances that could be launched (`available`), or
/// preempted probes (`preempted`: 1 = unavailable, 0 = available).
enum class availability_polarity : std::uint8_t { available, preempted };

template <>
struct enum_text<availability_polarity> {
    static constexpr std::array<enum_name<availability_polarity>, 2> names{{
        {availability_polarity::available, "available"},
        {availability_polarity::preempted, "preempted"},
    }};
};

/// A CSV file read: the trace (the caller's name, one count per row, gap_s = the median row
/// difference, no prices) and the probing the reader measured.
struct spot_market_csv {
    spot_market_trace trace{};
    std::int64_t first_time_s = 0;  ///< the first row's time, seconds since 1970-01-01 00:00:00 UTC
    std::int64_t last_time_s = 0;   ///< the last row's
    double median_gap_s = 0.0;      ///< = trace.gap_s (an even number of differences: the mean of the middle two)
    std::int64_t min_gap_s = 0;     ///< the smallest difference between consecutive rows, >= 1
    std::int64_t max_gap_s = 0;     ///< the largest
};

namespace detail::spot_csv {

using text_lines::fail;
using text_lines::trim;
using text_lines::where;

inline constexpr std::string_view header_text = "date,availability";

/// "YYYY-MM-DD HH:MM:SS" (exact widths) as seconds since 1970-01-01 UTC; none when malformed or
/// when the date or time does not exist.
[[nodiscard]] inline std::optional<std::int64_t> timestamp(std::string_view text) noexcept {
    using trace_csv::cut;
    using trace_csv::digits;
    std::array<std::string_view, 2> date_time{};
    std::array<std::string_view, 3> ymd{};
    std::array<std::string_view, 3> hms{};
    if (!cut(text, ' ', date_time) || !cut(date_time[0], '-', ymd) || !cut(date_time[1], ':', hms)) return std::nullopt;
    return trace_csv::civil_seconds(digits(ymd[0], 4, 4), digits(ymd[1], 2, 2), digits(ymd[2], 2, 2), digits(hms[0], 2, 2),
                                    digits(hms[1], 2, 2), digits(hms[2], 2, 2));
}

/// The median of `d` (reordered), the mean of the middle two for an even count.
[[nodiscard]] inline double median(std::vector<std::int64_t>& d) {
    const std::size_t mid = d.size() / 2;
    std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid), d.end());
    const auto upper = static_cast<double>(d[mid]);
    if (d.size() % 2 == 1) return upper;
    const auto lower = static_cast<double>(*std::max_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid)));
    return (lower + upper) / 2.0;
}

class reader {
public:
    reader(std::string name, availability_polarity polarity) : polarity_(polarity) { out_.trace.name = std::move(name); }

    void line(std::string_view text, std::int64_t number) {
        last_line_ = number;
        text = trim(text);
        if (text.empty()) return;
        if (!header_) {
            if (text != header_text) fail(number, "header", "the header date,availability", text);
            header_ = true;
            return;
        }
        row(text, number);
    }

    [[nodiscard]] spot_market_csv finish() && {
        const std::string end = where(last_line_ + 1);
        if (!header_) throw parse_error(end, "expected the header date,availability, found an empty input");
        if (times_.size() < 2)
            throw parse_error(end, "expected at least two rows after the header (the gap is measured between rows), found " +
                                       std::to_string(times_.size()));
        // Rows strictly increase (row() checks it), so every difference is >= 1 s and so is the
        // median: a gap <= 0 is rejected there, as rows out of order or equal.
        std::vector<std::int64_t> gaps(times_.size() - 1);
        for (std::size_t i = 1; i < times_.size(); ++i) gaps[i - 1] = times_[i] - times_[i - 1];
        const auto [lo, hi] = std::minmax_element(gaps.begin(), gaps.end());
        out_.min_gap_s = *lo;
        out_.max_gap_s = *hi;
        out_.median_gap_s = median(gaps);
        out_.trace.gap_s = out_.median_gap_s;
        out_.first_time_s = times_.front();
        out_.last_time_s = times_.back();
        return std::move(out_);
    }

private:
    void row(std::string_view text, std::int64_t number) {
        static constexpr std::array<std::string_view, 2> names{"date", "availability"};
        const auto f = text_lines::split(text, number, names);
        const std::optional<std::int64_t> t = timestamp(f[0]);
        if (!t) fail(number, "date", "a UTC time YYYY-MM-DD HH:MM:SS that exists", f[0]);
        if (!times_.empty() && *t <= times_.back())
            fail(number, "date", "a time after line " + std::to_string(previous_line_) + "'s " + previous_date_ +
                                     " (rows strictly increase)", f[0]);
        const std::optional<std::int64_t> value = trace_csv::digits(f[1], 1, 10);
        if (!value || *value > 2147483647) fail(number, "availability", "an integer in [0, 2147483647]", f[1]);
        std::int32_t available = static_cast<std::int32_t>(*value);
        if (polarity_ == availability_polarity::preempted) {
            if (*value > 1) fail(number, "availability", "0 or 1 (a preempted-probe flag: 1 = unavailable)", f[1]);
            available = 1 - available;
        }
        times_.push_back(*t);
        out_.trace.available.push_back(available);
        previous_line_ = number;
        previous_date_.assign(f[0]);
    }

    availability_polarity polarity_;
    spot_market_csv out_;
    std::vector<std::int64_t> times_;
    bool header_ = false;
    std::int64_t last_line_ = 0;
    std::int64_t previous_line_ = 0;
    std::string previous_date_;
};

}  // namespace detail::spot_csv

/// Reads a SkyNomad availability CSV as the trace `name` (UTF-8; an invalid_input otherwise).
/// Errors (parse_error, where() = "line N"): not UTF-8; a first non-blank line other than
/// `date,availability`; not 2 fields; a date that is malformed or does not exist; a count that is
/// not an integer in [0, 2^31 - 1] (negative, fractional, signed) or, for `preempted`, not 0 or 1;
/// a time not after the previous row's (out of order or equal); fewer than two rows (no gap; at
/// the line after the last).
[[nodiscard]] inline spot_market_csv parse_spot_market_csv(std::istream& in, std::string name,
                                                           availability_polarity polarity = availability_polarity::available) {
    detail::require_utf8("name", name);
    return detail::trace_csv::read_lines(in, detail::spot_csv::reader(std::move(name), polarity));
}

[[nodiscard]] inline spot_market_csv parse_spot_market_csv(std::string_view text, std::string name,
                                                           availability_polarity polarity = availability_polarity::available) {
    detail::require_utf8("name", name);
    return detail::trace_csv::read_lines(text, detail::spot_csv::reader(std::move(name), polarity));
}

}  // namespace dnnplan
