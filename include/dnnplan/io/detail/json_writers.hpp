#pragma once
// The JSON writers (io/detail/json_core.hpp has the rules): scalars, enums by name, containers,
// the records of the field tables (io/detail/json_fields.hpp), null for an absent optional or a
// limit that is not set; a number a result cannot write finitely is a library bug and throws.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/io/detail/json_expected.hpp>
#include <dnnplan/io/detail/json_fields.hpp>
#include <dnnplan/io/detail/json_paths.hpp>

#include <cmath>
#include <concepts>
#include <cstddef>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace dnnplan::detail::json_io {

/// A value as JSON. Doubles must be finite: JSON has no infinity, and nlohmann would write null,
/// which does not read back as the number; results say "none" with an empty optional instead.
template <document Json, class T>
[[nodiscard]] Json write_value(const T& value, std::string_view path);

template <document Json, class T>
void write_fields(Json& j, const T& value, std::string_view path) {
    std::apply(
        [&](const auto&... f) {
            const auto write_one = [&](const auto& fd) {
                if constexpr (std::is_same_v<std::remove_cvref_t<decltype(fd)>, constant_field>) {
                    j[std::string(fd.key)] = std::string(fd.value);
                } else if constexpr (is_nested_field<std::remove_cvref_t<decltype(fd)>>::value) {
                    j[std::string(fd.key)] = write_value<Json>((value.*fd.outer).*fd.inner, member_path(path, fd.key));
                } else if constexpr (!is_deprecated_field<std::remove_cvref_t<decltype(fd)>>::value) {
                    using member_type = std::remove_cvref_t<decltype(value.*fd.member)>;
                    const auto& member = value.*fd.member;
                    bool none = false;
                    if constexpr (std::is_arithmetic_v<member_type> && !std::is_same_v<member_type, bool>)
                        none = (fd.rule == field_rule::unbounded && member == unbounded_value<member_type>()) ||
                               (fd.rule == field_rule::unbounded_below && member == -unbounded_value<member_type>());
                    if (none) j[std::string(fd.key)] = nullptr;
                    else j[std::string(fd.key)] = write_value<Json>(member, member_path(path, fd.key));
                }
            };
            (write_one(f), ...);
        },
        json_fields<T>::fields);
}

template <document Json, class T>
[[nodiscard]] Json write_value(const T& value, std::string_view path) {
    if constexpr (std::same_as<T, bool> || std::same_as<T, std::string> || json_integer<T>) {
        return Json(value);
    } else if constexpr (std::floating_point<T>) {
        if (!std::isfinite(value))
            throw error("cannot write " + field_of(path) + " = " + format_number(value) +
                        " as JSON (no infinity or NaN): a result must say none with null instead");
        return Json(value);
    } else if constexpr (named_enum<T>) {
        return Json(std::string(to_string(value)));
    } else if constexpr (is_optional<T>::value) {
        return value ? write_value<Json>(*value, path) : Json(nullptr);
    } else if constexpr (is_vector<T>::value) {
        Json out = Json::array();
        for (std::size_t i = 0; i < value.size(); ++i) out.push_back(write_value<Json>(value[i], element_path(path, i)));
        return out;
    } else if constexpr (requires { value.begin()->first; value.begin()->second; }) {  // a map by name
        Json out = Json::object();
        for (const auto& [key, element] : value) out[key] = write_value<Json>(element, member_path(path, key));
        return out;
    } else if constexpr (json_record<T>) {
        Json out = Json::object();
        write_fields(out, value, path);
        return out;
    } else if constexpr (custom_json_value<T>) {
        return json_value_io<T>::template write<Json>(value, path);
    } else {
        Json out;
        to_json(out, value);  // a type with its own writer, found by argument-dependent lookup
        return out;
    }
}

}  // namespace dnnplan::detail::json_io
