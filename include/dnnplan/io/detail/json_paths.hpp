#pragma once
// What every JSON reader and writer of io/ starts from (io/detail/json_core.hpp has the rules):
// the two nlohmann document types, the path of a field from the document root, and the failure
// that names it with a short text of the offending value.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/format.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace dnnplan::detail::json_io {

/// The two nlohmann document types we convert to and from.
template <class Json>
concept document = std::same_as<Json, nlohmann::json> || std::same_as<Json, nlohmann::ordered_json>;

/// Passed first to every read_value() overload so that calls from templates defined above an
/// overload still find it (argument-dependent lookup at instantiation includes this namespace).
struct tag {};

inline constexpr std::string_view root_field = "(root)";

[[nodiscard]] inline std::string member_path(std::string_view path, std::string_view key) {
    std::string out(path);
    if (!out.empty()) out += '.';
    out += key;
    return out;
}

[[nodiscard]] inline std::string element_path(std::string_view path, std::size_t index) {
    std::string out(path);
    out += '[';
    out += std::to_string(index);
    out += ']';
    return out;
}

/// The field name of a path: the path, or "(root)" for the document itself.
[[nodiscard]] inline std::string field_of(std::string_view path) {
    return path.empty() ? std::string(root_field) : std::string(path);
}

[[noreturn]] inline void fail(std::string_view path, std::string value, std::string expected) {
    throw invalid_input(field_of(path), std::move(value), std::move(expected));
}

/// The offending value as short text: scalars as JSON, containers summarised (never dumped:
/// an unknown key may hold anything, of any size or depth).
template <document Json>
[[nodiscard]] std::string value_text(const Json& j) {
    if (j.is_object()) return j.empty() ? "{}" : "{...}";
    if (j.is_array()) return j.empty() ? "[]" : "[...]";
    if (j.is_number_float()) {
        const double value = j.template get<double>();
        if (!std::isfinite(value)) return format_number(value);  // dump() would print null
    }
    std::string text = j.dump(-1, ' ', false, Json::error_handler_t::replace);
    constexpr std::size_t limit = 60;
    if (text.size() > limit) {
        std::size_t cut = limit;
        while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;  // UTF-8 boundary
        text.resize(cut);
        text += "...";
    }
    return text;
}

}  // namespace dnnplan::detail::json_io
