#pragma once
// The one formatter of numbers in the library's text (reasons, notes, error messages): the
// shortest text that reads back as the same double, and its rounded forms for notes (the figures
// themselves keep every digit).

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

namespace dnnplan::detail {

/// Shortest text that reads back as the same double ("nan", "inf" for non-finite values).
[[nodiscard]] inline std::string format_number(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    std::array<char, 64> buffer{};
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
    if (ec != std::errc{}) return "?";
    return std::string(buffer.data(), end);
}

[[nodiscard]] inline std::string format_number(std::int64_t value) { return std::to_string(value); }

/// `x` to `digits` significant digits.
[[nodiscard]] inline std::string format_significant(double x, int digits = 4) {
    if (x == 0.0 || !std::isfinite(x)) return format_number(x);
    const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(x)))));
    return format_number(std::round(x * scale) / scale);
}

/// USD to the cent.
[[nodiscard]] inline std::string format_usd(double usd) { return format_number(std::round(usd * 100.0) / 100.0); }

/// A probability to four decimals.
[[nodiscard]] inline std::string format_probability(double p) { return format_number(std::round(p * 1e4) / 1e4); }

}  // namespace dnnplan::detail
