#pragma once
// Checks shared by every validate(): each throws dnnplan::invalid_input naming the field, the
// value and the allowed range. Nothing is clamped.

#include <dnnplan/core/error.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>

namespace dnnplan::detail {

/// The prefix of the fields under `path`: "" at the root, "path." otherwise.
[[nodiscard]] inline std::string field_prefix(std::string_view path) {
    return path.empty() ? std::string() : std::string(path) + ".";
}

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

inline void require_finite(std::string_view field, double value) {
    if (!std::isfinite(value)) throw invalid_input(std::string(field), format_number(value), "a finite number");
}

inline void require_positive(std::string_view field, double value) {
    if (!std::isfinite(value) || value <= 0.0)
        throw invalid_input(std::string(field), format_number(value), "a finite number > 0");
}

inline void require_non_negative(std::string_view field, double value) {
    if (!std::isfinite(value) || value < 0.0)
        throw invalid_input(std::string(field), format_number(value), "a finite number >= 0");
}

inline void require_at_least(std::string_view field, std::int64_t value, std::int64_t minimum) {
    if (value < minimum)
        throw invalid_input(std::string(field), format_number(value),
                            "an integer >= " + std::to_string(minimum));
}

}  // namespace dnnplan::detail
