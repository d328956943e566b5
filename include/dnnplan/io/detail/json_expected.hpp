#pragma once
// What each C++ type expects of a JSON value, as the readers' errors say it (io/detail/json_core.hpp
// has the rules): integral fields are counts and budgets, enums their names, optionals also null.

#include <dnnplan/core/enum_text.hpp>

#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace dnnplan::detail::json_io {

template <class T>
struct is_optional : std::false_type {};
template <class T>
struct is_optional<std::optional<T>> : std::true_type {};

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

template <class Int>
concept json_integer = std::integral<Int> && !std::same_as<Int, bool>;

/// Integral fields are counts and budgets: non-negative, and they must fit their type.
template <json_integer Int>
[[nodiscard]] std::string integer_expected() {
    return "an integer in [0, " + std::to_string(std::numeric_limits<Int>::max()) + "]";
}

template <class T>
[[nodiscard]] std::string expected_of() {
    if constexpr (std::same_as<T, bool>) return "true or false";
    else if constexpr (named_enum<T>) return enum_expected<T>();
    else if constexpr (json_integer<T>) return integer_expected<T>();
    else if constexpr (std::floating_point<T>) return "a number";
    else if constexpr (std::same_as<T, std::string>) return "a string";
    else if constexpr (is_optional<T>::value) return expected_of<typename T::value_type>() + " or null";
    else if constexpr (is_vector<T>::value) return "an array";
    else return "an object";
}

}  // namespace dnnplan::detail::json_io
