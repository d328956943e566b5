#pragma once
// JSON text to a document (io/detail/json_core.hpp has the rules): nlohmann's SAX parser into a
// strict builder, so that malformed text is one dnnplan::parse_error("byte N") and a key given
// twice in one object an invalid_input; no nlohmann exception leaves it.

#include <dnnplan/core/error.hpp>
#include <dnnplan/io/detail/json_paths.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace dnnplan::detail::json_io {

/// Builds the document from nlohmann's SAX events, so that a malformed text (including a number
/// too large for a double, which nlohmann reports as out_of_range) becomes one parse_error with
/// its byte position, and no nlohmann exception is thrown at all. Iterative: nesting depth is
/// not limited by the stack. A key given twice in one object is found in O(1) per key.
template <document Json>
class document_builder {
public:
    using number_integer_t = typename Json::number_integer_t;
    using number_unsigned_t = typename Json::number_unsigned_t;
    using number_float_t = typename Json::number_float_t;
    using string_t = typename Json::string_t;
    using binary_t = typename Json::binary_t;

    explicit document_builder(Json& root) : root_(root) {}

    bool null() { return add(nullptr) != nullptr; }
    bool boolean(bool value) { return add(value) != nullptr; }
    bool number_integer(number_integer_t value) { return add(value) != nullptr; }
    bool number_unsigned(number_unsigned_t value) { return add(value) != nullptr; }
    bool number_float(number_float_t value, const string_t&) { return add(value) != nullptr; }
    bool string(string_t& value) { return add(value) != nullptr; }
    bool binary(binary_t&) { return false; }  // JSON text has no binary values
    bool start_object(std::size_t) {
        stack_.push_back(add(Json::value_t::object));
        keys_.emplace_back();
        return true;
    }
    bool key(string_t& name) {
        Json& object = *stack_.back();
        if (!keys_.back().insert(name).second) {  // strict: a key twice in one object is an error
            duplicate_ = path_to(object);
            if (!duplicate_.empty()) duplicate_ += '.';
            duplicate_ += name;
            return false;
        }
        member_ = &object[name];
        return true;
    }
    bool end_object() {
        stack_.pop_back();
        keys_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        stack_.push_back(add(Json::value_t::array));
        keys_.emplace_back();
        return true;
    }
    bool end_array() {
        stack_.pop_back();
        keys_.pop_back();
        return true;
    }
    bool parse_error(std::size_t position, const std::string&, const typename Json::exception& e) {
        error_position_ = position;
        error_message_ = e.what();
        return false;
    }

    [[nodiscard]] std::size_t error_position() const noexcept { return error_position_; }
    /// The path of a key given twice in one object, or empty.
    [[nodiscard]] const std::string& duplicate_key() const noexcept { return duplicate_; }
    [[nodiscard]] const std::string& error_message() const noexcept { return error_message_; }

private:
    // The path from the root to `target`, one of the open containers (only built on an error).
    [[nodiscard]] std::string path_to(const Json& target) const {
        std::string path;
        const Json* parent = &root_;
        for (std::size_t level = 1; level < stack_.size() && parent != &target; ++level) {
            const Json* child = stack_[level];
            // Appends only: GCC 12 at -O3 warns falsely (-Wrestrict) on string operator+ here.
            if (parent->is_array()) {
                for (std::size_t i = 0; i < parent->size(); ++i) {
                    if (&(*parent)[i] != child) continue;
                    path += '[';
                    path += std::to_string(i);
                    path += ']';
                }
            } else {
                for (auto it = parent->begin(); it != parent->end(); ++it) {
                    if (&it.value() != child) continue;
                    if (!path.empty()) path += '.';
                    path += it.key();
                }
            }
            parent = child;
        }
        return path;
    }

    template <class Value>
    Json* add(Value&& value) {
        if (stack_.empty()) {
            root_ = Json(std::forward<Value>(value));
            return &root_;
        }
        Json& parent = *stack_.back();
        if (parent.is_array()) {
            parent.push_back(Json(std::forward<Value>(value)));
            return &parent.back();
        }
        *member_ = Json(std::forward<Value>(value));
        return member_;
    }

    Json& root_;
    std::vector<Json*> stack_;
    std::vector<std::unordered_set<string_t>> keys_;  // the keys of each open container (empty for arrays)
    Json* member_ = nullptr;
    std::size_t error_position_ = 0;
    std::string error_message_ = "unsupported value";
    std::string duplicate_;
};

/// nlohmann's "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error
/// ..." -> "line 1, column 5: syntax error ..." (our parse_error says "parse error at byte N").
[[nodiscard]] inline std::string parse_message(std::string message) {
    if (message.starts_with("[json.exception.")) {
        const auto end = message.find("] ");
        if (end != std::string::npos) message.erase(0, end + 2);
    }
    constexpr std::string_view prefix = "parse error at ";
    if (message.starts_with(prefix)) message.erase(0, prefix.size());
    return message;
}

/// Parses `input` (a std::istream&, or an iterator pair) as one JSON document.
template <class... Input>
[[nodiscard]] nlohmann::ordered_json parse_document(Input&&... input) {
    nlohmann::ordered_json document;
    document_builder<nlohmann::ordered_json> builder(document);
    if (!nlohmann::ordered_json::sax_parse(std::forward<Input>(input)..., &builder)) {
        if (!builder.duplicate_key().empty()) throw invalid_input(builder.duplicate_key(), "given twice", "each key once in its object");
        throw dnnplan::parse_error("byte " + std::to_string(builder.error_position()), parse_message(builder.error_message()));
    }
    return document;
}

[[nodiscard]] inline nlohmann::ordered_json parse_text(std::string_view text) {
    // A pointer range: nlohmann reads exactly these bytes (no terminating NUL needed).
    return parse_document(text.data(), text.data() + text.size());
}

}  // namespace dnnplan::detail::json_io
