#pragma once
// A JSON object with a fixed set of keys (io/detail/json_core.hpp has the rules): any other key is
// rejected with the allowed ones, a missing required key is named with the value "missing".

#include <dnnplan/io/detail/json_expected.hpp>
#include <dnnplan/io/detail/json_paths.hpp>
#include <dnnplan/io/detail/json_readers.hpp>

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace dnnplan::detail::json_io {

/// An object with a fixed set of keys: rejects any other key on construction.
template <document Json>
class object_reader {
public:
    /// `keys`: every key read; `shown`: the ones an error lists (the current spellings; by default
    /// all). Empty entries are ignored.
    object_reader(const Json& j, std::string path, std::span<const std::string_view> keys,
                  std::span<const std::string_view> shown = {})
        : object_(j), path_(std::move(path)) {
        if (!j.is_object()) fail(path_, value_text(j), "an object");
        if (shown.empty()) shown = keys;
        for (auto it = j.begin(); it != j.end(); ++it) {
            if (!it.key().empty() && std::find(keys.begin(), keys.end(), std::string_view(it.key())) != keys.end()) continue;
            std::string allowed = "one of the keys ";
            bool first = true;
            for (const std::string_view key : shown) {
                if (key.empty()) continue;
                if (!first) allowed += ", ";
                first = false;
                allowed += key;
            }
            fail(member_path(path_, it.key()), value_text(it.value()), std::move(allowed));
        }
    }
    object_reader(const Json& j, std::string path, std::initializer_list<std::string_view> keys)
        : object_reader(j, std::move(path), std::span<const std::string_view>(keys.begin(), keys.size())) {}

    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] std::string path_of(std::string_view key) const { return member_path(path_, key); }

    /// The value at `key`, or nullptr when the key is absent.
    [[nodiscard]] const Json* find(std::string_view key) const {
        const auto it = object_.find(std::string(key));
        return it == object_.end() ? nullptr : &*it;
    }

    /// The value at `key`; a missing key names what it should have held.
    [[nodiscard]] const Json& at(std::string_view key, std::string expected) const {
        const Json* value = find(key);
        if (value == nullptr) fail(path_of(key), "missing", std::move(expected));
        return *value;
    }

    template <class T>
    void required(std::string_view key, T& out) const {
        read_value(tag{}, at(key, expected_of<T>()), path_of(key), out);
    }

    /// Absent: `out` keeps its value (the default of its struct).
    template <class T>
    void optional(std::string_view key, T& out) const {
        if (const Json* value = find(key)) read_value(tag{}, *value, path_of(key), out);
    }

private:
    const Json& object_;
    std::string path_;
};

}  // namespace dnnplan::detail::json_io
