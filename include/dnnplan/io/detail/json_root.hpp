#pragma once
// Reading a whole document (io/detail/json_core.hpp has the rules): the value, then its type's
// validate() at the document root, with an error on a field renamed since dnnplan 0.1 named as
// the document spells it.

#include <dnnplan/core/error.hpp>
#include <dnnplan/io/detail/json_fields.hpp>
#include <dnnplan/io/detail/json_paths.hpp>
#include <dnnplan/io/detail/json_readers.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace dnnplan::detail::json_io {

/// The fields renamed since dnnplan 0.1 (the field tables' formerly() and deprecated() keys), as
/// (current path suffix, key of 0.1): a validate() error on a field the document spells the old
/// way names it as written.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 7> renamed_fields{{
    {"fixed_s", "alpha_c_s"},
    {"per_sample_s", "beta_c_s"},
    {"budget.max_nodes", "node_budget"},
    {"budget.max_evaluations", "evaluation_budget"},
    {"budget.max_time_s", "time_budget_s"},
    {"sliding_window.paper_bounds", "sliding_window_paper_bounds"},
    {"sliding_window.wrap_around", "sliding_window_wrap_around"},
}};

/// The value at `path` in the document (object keys joined with '.', which a key may itself
/// contain: the longest key that fits is taken; array elements as [i]); nullptr when absent.
template <document Json>
[[nodiscard]] const Json* value_at(const Json& root, std::string_view path) {
    const Json* node = &root;
    while (!path.empty()) {
        if (path.front() == '[') {
            const auto close = path.find(']');
            if (close == std::string_view::npos || !node->is_array()) return nullptr;
            std::size_t index = 0;
            for (const char c : path.substr(1, close - 1)) {
                if (c < '0' || c > '9') return nullptr;
                index = index * 10 + static_cast<std::size_t>(c - '0');
            }
            if (index >= node->size()) return nullptr;
            node = &(*node)[index];
            path.remove_prefix(close + 1);
        } else {
            if (!node->is_object()) return nullptr;
            const Json* next = nullptr;
            std::size_t used = 0;
            for (auto it = node->begin(); it != node->end(); ++it) {
                const std::string_view key = it.key();
                const bool fits = path.starts_with(key) && (path.size() == key.size() || path[key.size()] == '.' || path[key.size()] == '[');
                if (fits && key.size() >= used) {
                    next = &it.value();
                    used = key.size();
                }
            }
            if (next == nullptr) return nullptr;
            node = next;
            path.remove_prefix(used);
        }
        if (!path.empty() && path.front() == '.') path.remove_prefix(1);
    }
    return node;
}

/// `e` with its field named as the document spells it, when that is a key of 0.1 (renamed_fields).
template <document Json>
[[nodiscard]] invalid_input as_written(const Json& document, const invalid_input& e) {
    const std::string_view field = e.field();
    for (const auto& [current, old] : renamed_fields) {
        if (!field.ends_with(current)) continue;
        const std::size_t cut = field.size() - current.size();
        if (cut > 0 && field[cut - 1] != '.') continue;
        const std::string_view parent = cut > 0 ? field.substr(0, cut - 1) : std::string_view();
        const Json* object = value_at(document, parent);
        if (object == nullptr || !object->is_object()) continue;
        const std::string_view first = current.substr(0, current.find('.'));
        if (object->contains(std::string(first)) || !object->contains(std::string(old))) continue;
        std::string renamed(parent);
        if (!renamed.empty()) renamed += '.';
        renamed += old;
        return invalid_input(renamed, e.value(), e.expected() + " (" + std::string(old) + " is read as " + std::string(current) + ")");
    }
    return e;
}

/// Reads a whole document into `out` (unchanged on failure) and runs the type's validate() at the
/// document root (fields named without a prefix, as the document spells them).
template <document Json, class T>
void read_root(const Json& j, T& out) {
    T value{};
    try {
        read_value(tag{}, j, std::string(), value);
    } catch (const nlohmann::json::exception& e) {
        // Unreachable: every access above checks the value's type first. Should one not, the
        // caller still gets a dnnplan::error, as these headers promise.
        throw invalid_input(std::string(root_field), "?", std::string("a document the reader can access: ") + e.what());
    }
    if constexpr (requires { value.validate(std::string_view()); }) {
        try {
            value.validate("");
        } catch (const invalid_input& e) {
            throw as_written(j, e);
        }
    }
    out = std::move(value);
}

}  // namespace dnnplan::detail::json_io
