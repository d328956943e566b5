#pragma once
// Error hierarchy. Misuse and malformed input are exceptions; expected outcomes (infeasible,
// budget exhausted) are statuses in results (see core/status.hpp).

#include <stdexcept>
#include <string>
#include <utility>

namespace dnnplan {

/// Base of every exception dnnplan throws.
class error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A value that breaks a documented requirement. Carries the field path (e.g.
/// "catalog.instances[2].quota"), the offending value as text, and what was expected.
class invalid_input : public error {
public:
    invalid_input(std::string field, std::string value, std::string expected)
        : error("invalid input: " + field + " = " + value + ": expected " + expected),
          field_(std::move(field)), value_(std::move(value)), expected_(std::move(expected)) {}

    [[nodiscard]] const std::string& field() const noexcept { return field_; }
    [[nodiscard]] const std::string& value() const noexcept { return value_; }
    [[nodiscard]] const std::string& expected() const noexcept { return expected_; }

private:
    std::string field_;
    std::string value_;
    std::string expected_;
};

/// Text that is not well-formed in its format (JSON syntax, a profile file's line). `where`
/// names the place (a line number or a byte offset).
class parse_error : public error {
public:
    parse_error(std::string where, const std::string& message)
        : error("parse error at " + where + ": " + message), where_(std::move(where)) {}

    [[nodiscard]] const std::string& where() const noexcept { return where_; }

private:
    std::string where_;
};

}  // namespace dnnplan
