#pragma once
// Reader of PipeDream's profiled graph files (graph.txt, written by the profilers of
// msr-fiddle/pipedream, profiler/*/profiles/<model>/graph.txt) into a layer_graph. The format,
// as this reader accepts it, is described in docs/graph-format.md:
//   node<k> -- <description> -- forward_compute_time=<ms>, backward_compute_time=<ms>, activation_size=<bytes>, parameter_size=<bytes>
//   <TAB>node<a> -- node<b>
// Times are milliseconds in the file and seconds in layer (divided by 1000).
// Every malformed line is a dnnplan::parse_error with where() = "line N" (1-based).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/text_lines.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/workload/layer_graph.hpp>

#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <istream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dnnplan::detail::pipedream {

inline constexpr std::string_view separator = " -- ";

[[nodiscard]] inline bool is_space(char c) noexcept {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

[[nodiscard]] inline std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

[[nodiscard]] inline bool has_space(std::string_view s) noexcept {
    for (const char c : s)
        if (is_space(c)) return true;
    return false;
}

/// The found text of an error message, quoted and cut after 80 bytes on a UTF-8 boundary.
[[nodiscard]] inline std::string quoted(std::string_view text) { return text_lines::quoted_text(text, 80); }

/// The four attributes, in the order PipeDream writes them.
inline constexpr std::array<std::string_view, 4> attribute_keys{"forward_compute_time", "backward_compute_time",
                                                                "activation_size", "parameter_size"};

[[nodiscard]] inline std::string attribute_list() {
    std::string out;
    for (std::size_t k = 0; k < attribute_keys.size(); ++k) {
        if (k > 0) out += k + 1 == attribute_keys.size() ? " and " : ", ";
        out += attribute_keys[k];
    }
    return out;
}

/// Reads the lines of one file; finish() builds the graph.
class graph_reader {
public:
    void line(std::string_view text) {
        ++line_number_;
        // Names and descriptions are echoed in tables, errors and JSON: the text must be UTF-8.
        if (const auto at = invalid_utf8_offset(text))
            fail("expected UTF-8 text, found a byte that is not UTF-8 at column " + std::to_string(*at + 1));
        text = trim_end(text);
        if (trim(text).empty()) return;
        if (is_space(text.front())) edge_line(trim(text));
        else node_line(text);
    }

    [[nodiscard]] layer_graph finish() {
        try {
            return layer_graph(layers_, edges_);
        } catch (const invalid_input& e) {
            // Every per-line rule was checked above, so this is a cycle (or a rule added to
            // layer_graph since): name the line of the edge that closes a cycle when there is one.
            if (const auto line = closing_edge_line()) fail(*line, "expected an acyclic graph, found " + closing_);
            throw parse_error("edges", "expected " + e.expected() + ", found " + e.value());
        }
    }

private:
    [[noreturn]] static void fail(std::size_t line, const std::string& message) {
        throw parse_error("line " + std::to_string(line), message);
    }
    [[noreturn]] void fail(const std::string& message) const { fail(line_number_, message); }

    static std::string_view trim_end(std::string_view s) noexcept {
        while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
        return s;
    }

    void node_line(std::string_view text) {
        const std::string expected_shape =
            "expected \"node<k> -- <description> -- forward_compute_time=<ms>, ...\", found ";
        const auto first = text.find(separator);
        if (first == std::string_view::npos) fail(expected_shape + quoted(text) + " (no \" -- \")");
        // The attributes follow the LAST separator, so that a description may contain " -- ".
        const auto last = text.rfind(separator);
        if (last == first) {
            // Trailing blanks are trimmed, so a line cut right after the second separator ends in " --".
            if (text.ends_with(" --")) fail(expected_shape + quoted(text) + " (no attributes after the last \" --\")");
            fail(expected_shape + quoted(text) + " (one \" -- \"; the attributes need a second)");
        }
        const std::string_view id = text.substr(0, first);
        const std::string_view description =
            first + separator.size() <= last ? text.substr(first + separator.size(), last - first - separator.size())
                                             : std::string_view();
        if (has_space(id)) fail("expected a node id without spaces, found " + quoted(id));
        if (const auto it = index_of_.find(std::string(id)); it != index_of_.end())
            fail("expected a new node id, found " + std::string(id) + ", already defined at line " +
                 std::to_string(node_lines_[it->second]));

        layer l;
        l.id = std::string(id);
        l.description = std::string(description);
        read_attributes(text.substr(last + separator.size()), l);
        index_of_.emplace(l.id, layers_.size());
        node_lines_.push_back(line_number_);
        layers_.push_back(std::move(l));
    }

    void read_attributes(std::string_view text, layer& l) {
        std::array<std::optional<double>, attribute_keys.size()> values{};
        while (true) {
            const auto comma = text.find(',');
            const std::string_view item = trim(text.substr(0, comma));
            read_attribute(item, values);
            if (comma == std::string_view::npos) break;
            text.remove_prefix(comma + 1);
        }
        for (std::size_t k = 0; k < values.size(); ++k)
            if (!values[k])
                fail("expected the attributes " + attribute_list() + ", found no " + std::string(attribute_keys[k]));
        l.forward_s = *values[0] / 1000.0;  // ms in the file, s in layer
        l.backward_s = *values[1] / 1000.0;
        l.activation_bytes = *values[2];
        l.parameter_bytes = *values[3];
    }

    void read_attribute(std::string_view item, std::array<std::optional<double>, attribute_keys.size()>& values) {
        const auto equals = item.find('=');
        if (equals == std::string_view::npos)
            fail("expected an attribute <key>=<value>, found " + quoted(item) +
                 (item.empty() ? std::string(" (an empty attribute)") : std::string()));
        const std::string_view key = trim(item.substr(0, equals));
        const std::string_view value = trim(item.substr(equals + 1));
        std::size_t k = 0;
        while (k < attribute_keys.size() && attribute_keys[k] != key) ++k;
        if (k == attribute_keys.size())
            fail("expected one of the attributes " + attribute_list() + ", found " + quoted(key));
        if (values[k]) fail("expected each attribute once, found " + std::string(key) + " again");
        // activation_size may list several output tensors, "[a; b; c]": their sizes are summed.
        if (k == 2 && value.starts_with('[')) {
            if (!value.ends_with(']') || value.size() < 2)
                fail("expected a list \"[<bytes>; <bytes>; ...]\", found " + quoted(item) + " (no closing ])");
            std::string_view list = value.substr(1, value.size() - 2);
            double sum = 0.0;
            while (true) {
                const auto semicolon = list.find(';');
                sum += number(key, trim(list.substr(0, semicolon)), item);
                if (semicolon == std::string_view::npos) break;
                list.remove_prefix(semicolon + 1);
            }
            values[k] = sum;
        } else {
            values[k] = number(key, value, item);
        }
    }

    /// A finite number >= 0, all of `text` read by std::from_chars.
    double number(std::string_view key, std::string_view text, std::string_view item) const {
        double value = 0.0;
        const char* const end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc{} || ptr != end || !std::isfinite(value))
            fail("expected a finite number for " + std::string(key) + ", found " + quoted(item));
        if (value < 0.0) fail("expected a number >= 0 for " + std::string(key) + ", found " + quoted(item));
        return value;
    }

    void edge_line(std::string_view text) {
        const auto at = text.find(separator);
        if (at == std::string_view::npos || text.find(separator, at + 1) != std::string_view::npos)
            fail("expected an edge \"<TAB>node<a> -- node<b>\", found " + quoted(text));
        const std::string_view from = trim(text.substr(0, at));
        const std::string_view to = trim(text.substr(at + separator.size()));
        if (from.empty() || to.empty() || has_space(from) || has_space(to))
            fail("expected an edge \"<TAB>node<a> -- node<b>\", found " + quoted(text));
        const std::size_t a = defined(from), b = defined(to);
        if (a == b) fail("expected an edge between two different nodes, found " + std::string(from) + " -- " +
                         std::string(to) + " (a self-loop)");
        if (!pairs_.emplace(a, b).second)
            fail("expected each edge once, found " + std::string(from) + " -- " + std::string(to) + " again");
        edges_.push_back({.from = a, .to = b});
        edge_lines_.push_back(line_number_);
    }

    std::size_t defined(std::string_view id) const {
        const auto it = index_of_.find(std::string(id));
        if (it == index_of_.end())
            fail("expected an edge between nodes defined on earlier lines, found " + std::string(id) +
                 ", which no earlier node line defines");
        return it->second;
    }

    // The first edge, in file order, that closes a cycle: adding the edges one by one, edge
    // a -> b closes one when a is already reachable from b. Runs only on a cyclic graph.
    std::optional<std::size_t> closing_edge_line() {
        std::vector<std::vector<std::size_t>> successors(layers_.size());
        for (std::size_t k = 0; k < edges_.size(); ++k) {
            const auto [a, b] = edges_[k];
            std::vector<bool> seen(successors.size(), false);
            std::vector<std::size_t> stack{b};
            seen[b] = true;
            while (!stack.empty()) {
                const std::size_t i = stack.back();
                stack.pop_back();
                if (i == a) {
                    closing_ = "the edge " + layers_[a].id + " -- " + layers_[b].id + ", which closes a cycle through " + layers_[a].id;
                    return edge_lines_[k];
                }
                for (const std::size_t j : successors[i])
                    if (!seen[j]) {
                        seen[j] = true;
                        stack.push_back(j);
                    }
            }
            successors[a].push_back(b);
        }
        return std::nullopt;
    }

    std::size_t line_number_ = 0;
    std::vector<layer> layers_;
    std::vector<layer_edge> edges_;
    std::vector<std::size_t> node_lines_;  // the line of each layer
    std::vector<std::size_t> edge_lines_;  // the line of each edge
    std::unordered_map<std::string, std::size_t> index_of_;
    std::set<std::pair<std::size_t, std::size_t>> pairs_;
    std::string closing_;
};

}  // namespace dnnplan::detail::pipedream

namespace dnnplan {

/// Reads a PipeDream graph.txt. Layer order is file order; times become seconds. Every
/// malformed line throws parse_error("line N", "expected ..., found ..."); a cycle throws
/// parse_error naming the line of the first edge (in file order) that closes one.
[[nodiscard]] inline layer_graph parse_pipedream_graph(std::istream& in) {
    detail::pipedream::graph_reader reader;
    std::string line;
    while (std::getline(in, line)) reader.line(line);
    if (in.bad()) throw parse_error("end of input", "expected a readable stream, found a read error");
    return reader.finish();
}

[[nodiscard]] inline layer_graph parse_pipedream_graph(std::string_view text) {
    detail::pipedream::graph_reader reader;
    while (!text.empty()) {
        const auto newline = text.find('\n');
        reader.line(text.substr(0, newline));
        if (newline == std::string_view::npos) break;
        text.remove_prefix(newline + 1);
    }
    return reader.finish();
}

}  // namespace dnnplan
