#pragma once
// The strict readers of JSON scalars and containers (io/detail/json_core.hpp has the rules): finite
// numbers, non-negative integers that fit their type, enums by name, null as an absent optional,
// arrays and maps by name; each failure names the field by its path.

#include <dnnplan/core/enum_text.hpp>
#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/format.hpp>
#include <dnnplan/io/detail/json_expected.hpp>
#include <dnnplan/io/detail/json_paths.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dnnplan::detail::json_io {

template <document Json>
void read_value(tag, const Json& j, const std::string& path, double& out) {
    if (!j.is_number()) fail(path, value_text(j), "a number");
    const double value = j.template get<double>();
    if (!std::isfinite(value)) fail(path, format_number(value), "a finite number");
    out = value;
}

template <document Json, json_integer Int>
void read_value(tag, const Json& j, const std::string& path, Int& out) {
    constexpr auto max = static_cast<std::uint64_t>(std::numeric_limits<Int>::max());
    std::uint64_t value = 0;
    if (j.is_number_unsigned()) {
        value = j.template get<std::uint64_t>();
    } else if (j.is_number_integer()) {
        const auto signed_value = j.template get<std::int64_t>();
        if (signed_value < 0) fail(path, value_text(j), integer_expected<Int>());
        value = static_cast<std::uint64_t>(signed_value);
    } else if (j.is_number_float()) {
        // 10.0 is the integer 10 (some writers print every number as a float); 2^64 is the first
        // double outside uint64.
        const double d = j.template get<double>();
        if (!(d >= 0.0 && d < 18446744073709551616.0 && std::trunc(d) == d)) fail(path, value_text(j), integer_expected<Int>());
        value = static_cast<std::uint64_t>(d);
    } else {
        fail(path, value_text(j), integer_expected<Int>());
    }
    if (value > max) fail(path, value_text(j), integer_expected<Int>());
    out = static_cast<Int>(value);
}

/// An integer that may be negative (degrees of freedom of a fit with more parameters than samples).
struct signed_integer {
    std::int64_t& value;
};

template <document Json>
void read_value(tag, const Json& j, const std::string& path, signed_integer out) {
    constexpr std::string_view expected = "an integer in [-9223372036854775808, 9223372036854775807]";
    if (j.is_number_integer() && !j.is_number_unsigned()) {
        out.value = j.template get<std::int64_t>();
    } else if (j.is_number_unsigned()) {
        if (j.template get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            fail(path, value_text(j), std::string(expected));
        out.value = static_cast<std::int64_t>(j.template get<std::uint64_t>());
    } else {
        fail(path, value_text(j), std::string(expected));
    }
}

template <document Json>
void read_value(tag, const Json& j, const std::string& path, bool& out) {
    if (!j.is_boolean()) fail(path, value_text(j), "true or false");
    out = j.template get<bool>();
}

/// JSON text is valid UTF-8 (the parser rejects anything else), so strings need no check here.
template <document Json>
void read_value(tag, const Json& j, const std::string& path, std::string& out) {
    if (!j.is_string()) fail(path, value_text(j), "a string");
    out = j.template get_ref<const typename Json::string_t&>();
}

template <document Json, named_enum Enum>
void read_value(tag, const Json& j, const std::string& path, Enum& out) {
    if (j.is_string())
        if (const std::optional<Enum> value = enum_from_string<Enum>(j.template get_ref<const typename Json::string_t&>())) {
            out = *value;
            return;
        }
    fail(path, value_text(j), enum_expected<Enum>());
}

/// Absent keys are handled by the object reader; here null means "no value".
template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::optional<T>& out) {
    if (j.is_null()) {
        out.reset();
        return;
    }
    T value{};
    try {
        read_value(tag{}, j, path, value);
    } catch (const invalid_input& e) {
        if (e.field() != field_of(path)) throw;  // a fault inside the value, not the value itself
        throw invalid_input(e.field(), e.value(), e.expected() + " or null");
    }
    out = std::move(value);
}

template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::vector<T>& out) {
    if (!j.is_array()) fail(path, value_text(j), "an array");
    out.clear();
    out.reserve(j.size());
    std::size_t index = 0;
    for (const auto& element : j) {
        T value{};
        read_value(tag{}, element, element_path(path, index++), value);
        out.push_back(std::move(value));
    }
}

/// {NAME: value}; a NAME's path is joined with '.' even if it contains dots, as validate() does.
template <document Json, class T>
void read_value(tag, const Json& j, const std::string& path, std::map<std::string, T, std::less<>>& out) {
    if (!j.is_object()) fail(path, value_text(j), "an object");
    out.clear();
    for (auto it = j.begin(); it != j.end(); ++it) {
        T value{};
        read_value(tag{}, it.value(), member_path(path, it.key()), value);
        out.insert_or_assign(it.key(), std::move(value));
    }
}

}  // namespace dnnplan::detail::json_io
