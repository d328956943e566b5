#pragma once
// What the line-oriented readers (io/pollux_trace.hpp, io/bamboo_trace.hpp, io/pipedream_graph.hpp) and the messages
// that quote a user's text share: a quoted excerpt, blanks trimmed, "line N", and the parse_error
// of a malformed field ("line N: field F: expected E, found \"...\"").

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace dnnplan::detail::text_lines {

/// `text` in quotes, cut after `max_bytes` (on a UTF-8 boundary) with "..." when longer.
[[nodiscard]] inline std::string quoted_text(std::string_view text, std::size_t max_bytes = 80) {
    std::size_t cut = text.size() < max_bytes ? text.size() : max_bytes;
    while (cut < text.size() && cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
    std::string out = "\"";
    out += text.substr(0, cut);
    if (cut < text.size()) out += "...";
    out += '"';
    return out;
}

/// Without leading and trailing blanks, tabs, CR (of CRLF files) and LF.
[[nodiscard]] inline std::string_view trim(std::string_view s) noexcept {
    const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
    while (!s.empty() && space(s.front())) s.remove_prefix(1);
    while (!s.empty() && space(s.back())) s.remove_suffix(1);
    return s;
}

[[nodiscard]] inline std::string where(std::int64_t line) { return "line " + std::to_string(line); }

/// Throws parse_error(where(line), "expected UTF-8 text, ...") naming the first byte that is not
/// UTF-8: a line is echoed in messages and tables, so it must be text.
inline void require_utf8_line(std::string_view text, std::int64_t line) {
    if (const auto at = invalid_utf8_offset(text))
        throw parse_error(where(line), "expected UTF-8 text, found a byte that is not UTF-8 at column " + std::to_string(*at + 1));
}

/// Throws parse_error(where(line), "field F: expected E, found \"...\"") (the found text quoted,
/// cut after `max_bytes`).
[[noreturn]] inline void fail(std::int64_t line, std::string_view field, std::string_view expected, std::string_view found,
                              std::size_t max_bytes = 80) {
    std::string message = "field ";
    message += field;
    message += ": expected ";
    message += expected;
    message += ", found ";
    message += quoted_text(found, max_bytes);
    throw parse_error(where(line), message);
}

/// Splits a line on commas into exactly Count trimmed fields; otherwise a parse_error at `line`
/// naming the columns ("expected 3 comma-separated fields (a,b,c), found 2 (<missing>c)").
template <std::size_t Count>
[[nodiscard]] std::array<std::string_view, Count> split(std::string_view text, std::int64_t line,
                                                        const std::array<std::string_view, Count>& names,
                                                        std::string_view missing = "missing field ") {
    std::array<std::string_view, Count> fields{};
    std::size_t count = 0;
    std::size_t start = 0;
    while (true) {
        const std::size_t comma = text.find(',', start);
        if (count < Count) fields[count] = trim(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
        ++count;
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (count != Count) {
        std::string message = "expected " + std::to_string(Count) + " comma-separated fields (";
        for (std::size_t i = 0; i < Count; ++i) {
            if (i > 0) message += ',';
            message += names[i];
        }
        message += "), found " + std::to_string(count);
        message += " (";
        message += count < Count ? missing : std::string_view("extra fields after ");
        message += count < Count ? names[count] : names[Count - 1];
        message += ")";
        throw parse_error(where(line), message);
    }
    return fields;
}

}  // namespace dnnplan::detail::text_lines
