#pragma once
// The one way an enum of dnnplan gets its text: a specialisation of enum_text beside the enum,
// listing each value's name (and, for one version after a rename, the old spellings still read):
//
//     template <> struct enum_text<price_kind> {
//         static constexpr std::array<enum_name<price_kind>, 2> names{{
//             {price_kind::spot, "spot"}, {price_kind::on_demand, "on_demand"}}};
//     };
//
// to_string(value) (found by argument-dependent lookup), parse_enum<E>(text, field) and the JSON
// readers and writers (io/) all read that table; nothing else spells an enum's values.

#include <dnnplan/core/error.hpp>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace dnnplan {

template <class Enum>
struct enum_name {
    Enum value;
    std::string_view name;
};

/// Specialised beside each enum: `names` (every value once, the spelling written) and, optionally,
/// `deprecated` (old spellings that are still read, with the value they mean).
template <class Enum>
struct enum_text;

template <class Enum>
concept named_enum = std::is_enum_v<Enum> && requires {
    { enum_text<Enum>::names.size() } -> std::convertible_to<std::size_t>;
};

/// The name of `value`; "unknown" for a value outside the enumerators (it does not read back).
template <named_enum Enum>
[[nodiscard]] constexpr std::string_view to_string(Enum value) noexcept {
    for (const auto& entry : enum_text<Enum>::names)
        if (entry.value == value) return entry.name;
    return "unknown";
}

/// The value named `text` (a current name or a deprecated spelling), if any.
template <named_enum Enum>
[[nodiscard]] constexpr std::optional<Enum> enum_from_string(std::string_view text) noexcept {
    for (const auto& entry : enum_text<Enum>::names)
        if (entry.name == text) return entry.value;
    if constexpr (requires { enum_text<Enum>::deprecated; }) {
        for (const auto& entry : enum_text<Enum>::deprecated)
            if (entry.name == text) return entry.value;
    }
    return std::nullopt;
}

/// Whether `text` is a deprecated spelling of Enum (read, but no longer written).
template <named_enum Enum>
[[nodiscard]] constexpr bool is_deprecated_spelling(std::string_view text) noexcept {
    if constexpr (requires { enum_text<Enum>::deprecated; }) {
        for (const auto& entry : enum_text<Enum>::deprecated)
            if (entry.name == text) return true;
    }
    return false;
}

/// "one of \"a\", \"b\"": what a field of type Enum expects, for error messages.
template <named_enum Enum>
[[nodiscard]] std::string enum_expected() {
    std::string out = "one of ";
    bool first = true;
    for (const auto& entry : enum_text<Enum>::names) {
        if (!first) out += ", ";
        first = false;
        out += '"';
        out += entry.name;
        out += '"';
    }
    return out;
}

/// The value named `text`; invalid_input naming `field` otherwise.
template <named_enum Enum>
[[nodiscard]] Enum parse_enum(std::string_view text, std::string_view field) {
    if (const std::optional<Enum> value = enum_from_string<Enum>(text)) return *value;
    std::string shown = "\"";
    shown += text;
    shown += '"';
    throw invalid_input(std::string(field), std::move(shown), enum_expected<Enum>());
}

}  // namespace dnnplan
