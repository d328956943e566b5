#pragma once
// Checks shared by every validate(): each throws dnnplan::invalid_input naming the field, the
// value and the allowed range. Nothing is clamped.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/format.hpp>

#include <array>
#include <concepts>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

namespace dnnplan::detail {

/// The prefix of the fields under `path`: "" at the root, "path." otherwise.
[[nodiscard]] inline std::string field_prefix(std::string_view path) {
    return path.empty() ? std::string() : std::string(path) + ".";
}

inline void require_finite(std::string_view field, double value) {
    if (!std::isfinite(value)) throw invalid_input(std::string(field), format_number(value), "a finite number");
}

/// > 0, finite and not subnormal: these values are divided by (prices, speeds, bandwidths), and a
/// subnormal one turns the quotient into infinity.
inline void require_positive(std::string_view field, double value) {
    if (!std::isnormal(value) || value < 0.0)
        throw invalid_input(std::string(field), format_number(value),
                            value > 0.0 && std::isfinite(value) ? "a finite number > 0 (not subnormal: at least 2.2250738585072014e-308)"
                                                                : "a finite number > 0");
}

inline void require_non_negative(std::string_view field, double value) {
    if (!std::isfinite(value) || value < 0.0)
        throw invalid_input(std::string(field), format_number(value), "a finite number >= 0");
}

/// The offset of the first byte of `text` that is not part of a well-formed UTF-8 sequence
/// (Unicode 15, table 3-7: no overlong forms, no surrogates, nothing above U+10FFFF); none when
/// the whole text is valid.
[[nodiscard]] constexpr std::optional<std::size_t> invalid_utf8_offset(std::string_view text) noexcept {
    std::size_t i = 0;
    while (i < text.size()) {
        const auto b0 = static_cast<unsigned char>(text[i]);
        if (b0 < 0x80) {
            ++i;
            continue;
        }
        std::size_t length = 0;
        unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
        if (b0 >= 0xC2 && b0 <= 0xDF) length = 2;
        else if (b0 == 0xE0) length = 3, lo = 0xA0;
        else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) length = 3;
        else if (b0 == 0xED) length = 3, hi = 0x9F;
        else if (b0 == 0xF0) length = 4, lo = 0x90;
        else if (b0 >= 0xF1 && b0 <= 0xF3) length = 4;
        else if (b0 == 0xF4) length = 4, hi = 0x8F;
        else return i;
        if (i + length > text.size()) return i;
        for (std::size_t k = 1; k < length; ++k) {
            const auto b = static_cast<unsigned char>(text[i + k]);
            if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return i;
        }
        i += length;
    }
    return std::nullopt;
}

/// Throws invalid_input naming `field` unless `text` is valid UTF-8 (the offending byte's offset
/// is given, not the bytes: they could not be printed).
inline void require_utf8(std::string_view field, std::string_view text) {
    if (const auto at = invalid_utf8_offset(text))
        throw invalid_input(std::string(field), "a byte that is not UTF-8 at offset " + std::to_string(*at), "UTF-8 text");
}

inline void require_at_least(std::string_view field, std::int64_t value, std::int64_t minimum) {
    if (value < minimum)
        throw invalid_input(std::string(field), format_number(value),
                            "an integer >= " + std::to_string(minimum));
}

/// A field path built only when a check fails: the checks of long lists (a catalog's instance
/// types) then allocate nothing. A callable returning the path as a string.
template <class F>
concept path_builder = std::invocable<const F&> && std::convertible_to<std::invoke_result_t<const F&>, std::string>;

template <path_builder F>
inline void require_finite(const F& field, double value) {
    if (!std::isfinite(value)) require_finite(std::string(field()), value);
}

template <path_builder F>
inline void require_positive(const F& field, double value) {
    if (!std::isnormal(value) || value < 0.0) require_positive(std::string(field()), value);
}

template <path_builder F>
inline void require_non_negative(const F& field, double value) {
    if (!std::isfinite(value) || value < 0.0) require_non_negative(std::string(field()), value);
}

template <path_builder F>
inline void require_at_least(const F& field, std::int64_t value, std::int64_t minimum) {
    if (value < minimum) require_at_least(std::string(field()), value, minimum);
}

}  // namespace dnnplan::detail
