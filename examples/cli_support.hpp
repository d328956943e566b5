#pragma once
// The command-line pieces the example planners share (one program per examples/*.cpp; this
// header is included, not built on its own). Their contract: a malformed command line or input
// file prints one line on stderr and exits with 2; an unexpected failure exits with 1.
//
// Command lines are parsed from a table (parse_command_line): each row names a flag, what it
// takes (nothing, one value, or one or more values) and where the value goes, so a program states
// its flags once and gets the same rules as every other: unknown flags, a missing value, a flag
// given twice and stray arguments are errors naming the flag; -h/--help prints the usage.

#include <dnnplan/core/error.hpp>

#include <charconv>
#include <cstdio>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#ifdef _WIN32
#include <io.h>  // _isatty
#else
#include <unistd.h>  // isatty
#endif

namespace dnnplan_examples {

/// A malformed command line or an input file that cannot be read: the program prints `message`
/// (with the usage line) and exits with 2.
struct command_line_error {
    std::string message;
};

/// --help or -h was given: the program prints its usage and exits with 0.
struct help_requested {};

/// All of `text` as a Number (std::from_chars: no leading '+' or space, no trailing characters);
/// throws command_line_error naming `flag` otherwise.
template <class Number>
[[nodiscard]] Number parse_number(std::string_view flag, std::string_view text) {
    Number value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size())
        throw command_line_error{std::string(flag) + " expects a number, found \"" + std::string(text) + "\""};
    return value;
}

/// What a flag takes.
enum class takes {
    nothing,    ///< a switch
    one,        ///< one value
    one_or_more ///< values up to the next flag (PipeDream's -n M1 M2 ...)
};

/// One row of a command line's table. `apply` is called once per value (with "" for a switch).
struct flag {
    std::string_view name;  ///< "--json", "-n"
    takes arity = takes::nothing;
    std::function<void(std::string_view flag, std::string_view value)> apply;
    bool repeatable = false;  ///< may be given more than once (--trace A --trace B)
};

/// Rows for the common cases.
[[nodiscard]] inline flag switch_flag(std::string_view name, bool& target) {
    return {name, takes::nothing, [&target](std::string_view, std::string_view) { target = true; }};
}
[[nodiscard]] inline flag text_flag(std::string_view name, std::string& target) {
    return {name, takes::one, [&target](std::string_view, std::string_view v) { target = std::string(v); }};
}
[[nodiscard]] inline flag text_flag(std::string_view name, std::optional<std::string>& target) {
    return {name, takes::one, [&target](std::string_view, std::string_view v) { target = std::string(v); }};
}
template <class Number>
[[nodiscard]] flag number_flag(std::string_view name, Number& target) {
    return {name, takes::one, [&target](std::string_view f, std::string_view v) { target = parse_number<Number>(f, v); }};
}
template <class Number>
[[nodiscard]] flag number_flag(std::string_view name, std::optional<Number>& target) {
    return {name, takes::one, [&target](std::string_view f, std::string_view v) { target = parse_number<Number>(f, v); }};
}
/// A flag that may be given several times, each with one value, collected in order.
[[nodiscard]] inline flag texts_flag(std::string_view name, std::vector<std::string>& target) {
    return {name, takes::one, [&target](std::string_view, std::string_view v) { target.emplace_back(v); }, true};
}
template <class Number>
[[nodiscard]] flag numbers_flag(std::string_view name, std::vector<Number>& target) {
    return {name, takes::one_or_more,
            [&target](std::string_view f, std::string_view v) { target.push_back(parse_number<Number>(f, v)); }};
}

/// A token is a flag when it starts with "--" or is "-" and a letter ("-1" and "-" are values).
[[nodiscard]] inline bool is_flag(std::string_view token) noexcept {
    if (token.starts_with("--")) return true;
    return token.size() >= 2 && token[0] == '-' && ((token[1] >= 'a' && token[1] <= 'z') || (token[1] >= 'A' && token[1] <= 'Z'));
}

/// Parses argv[first..argc) against `flags`; returns the positional arguments (at most
/// `max_positional`). Throws help_requested for -h/--help, command_line_error otherwise.
[[nodiscard]] inline std::vector<std::string> parse_command_line(const std::vector<flag>& flags, int argc, char** argv,
                                                                 int first = 1, std::size_t max_positional = 0) {
    std::vector<std::string> positional;
    std::vector<std::string_view> seen;
    for (int i = first; i < argc; ++i) {
        const std::string_view token = argv[i];
        if (token == "-h" || token == "--help") throw help_requested{};
        if (!is_flag(token)) {
            if (positional.size() >= max_positional)
                throw command_line_error{max_positional == 0 ? "unexpected argument " + std::string(token)
                                                             : "one argument too many: " + std::string(token)};
            positional.emplace_back(token);
            continue;
        }
        const flag* row = nullptr;
        for (const flag& f : flags)
            if (f.name == token) row = &f;
        if (row == nullptr) throw command_line_error{"unknown option " + std::string(token)};
        for (const std::string_view s : seen)
            if (s == row->name && !row->repeatable) throw command_line_error{std::string(token) + " given twice"};
        seen.push_back(row->name);
        switch (row->arity) {
            case takes::nothing: row->apply(token, ""); break;
            case takes::one:
                if (i + 1 >= argc || is_flag(argv[i + 1])) throw command_line_error{std::string(token) + " expects a value"};
                row->apply(token, argv[++i]);
                break;
            case takes::one_or_more: {
                const int before = i;
                while (i + 1 < argc && !is_flag(argv[i + 1])) row->apply(token, argv[++i]);
                if (i == before) throw command_line_error{std::string(token) + " expects at least one value"};
                break;
            }
        }
    }
    return positional;
}

/// `file` opened for reading; throws command_line_error "cannot open <file>".
[[nodiscard]] inline std::ifstream open_input(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw command_line_error{"cannot open " + file};
    return in;
}

/// An input file the library rejected (its dnnplan::error, prefixed with the file's name): one line
/// on stderr, exit code 2.
struct input_error {
    std::string message;
};

/// read(stream) on `file` ("-": standard input); a dnnplan::error becomes an input_error naming
/// the file.
template <class Read>
auto read_input(const std::string& file, Read&& read) {
    const auto named = [&](const dnnplan::error& e) { return input_error{(file == "-" ? std::string("stdin") : file) + ": " + e.what()}; };
    if (file == "-") {
        try {
            return read(std::cin);
        } catch (const dnnplan::error& e) {
            throw named(e);
        }
    }
    std::ifstream in = open_input(file);
    try {
        return read(in);
    } catch (const dnnplan::error& e) {
        throw named(e);
    }
}

/// f() with a dnnplan::error turned into an input_error prefixed with `what` (a file name, or
/// "the bundled problem"): the library rejected what the input said.
template <class F>
auto on_input(const std::string& what, F&& f) {
    try {
        return f();
    } catch (const dnnplan::error& e) {
        throw input_error{what + ": " + e.what()};
    }
}

/// The programs' one number formatter for tables and notes. `value` with `digits` significant
/// digits (printf's %g) ...
[[nodiscard]] inline std::string format(double value, int digits = 6) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    return buffer;
}

/// ... or with `digits` digits after the point (printf's %f): money, rates, hours.
[[nodiscard]] inline std::string fixed(double value, int digits) {
    char buffer[400];  // %f of the largest double: 309 digits before the point
    std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
    return buffer;
}

/// Progress on stderr when it is a terminal (a pipe or a log gets nothing): callback() gives a
/// (done, total) function that prints "\r<program>: <what> <done> of <total> (p%)" at each whole
/// percent; the line ends when done reaches total or when this object goes (a budget may stop a
/// planner first). Keep the object alive while the planner runs.
class stderr_progress {
public:
    stderr_progress(std::string program, std::string what) : program_(std::move(program)), what_(std::move(what)) {}
    stderr_progress(const stderr_progress&) = delete;
    stderr_progress& operator=(const stderr_progress&) = delete;
    ~stderr_progress() {
        if (shown_ >= 0 && !ended_) std::fputc('\n', stderr);
    }

    [[nodiscard]] std::function<void(std::int64_t, std::int64_t)> callback() {
#ifdef _WIN32
        if (!_isatty(_fileno(stderr))) return {};
#else
        if (!isatty(STDERR_FILENO)) return {};
#endif
        return [this](std::int64_t done, std::int64_t total) { show(done, total); };
    }

private:
    void show(std::int64_t done, std::int64_t total) {
        const std::int64_t percent = total > 0 ? done * 100 / total : 100;
        if (percent == shown_ && done < total) return;
        shown_ = percent;
        ended_ = done >= total;
        std::fprintf(stderr, "\r%s: %s %lld of %lld (%lld%%)%s", program_.c_str(), what_.c_str(), static_cast<long long>(done),
                     static_cast<long long>(total), static_cast<long long>(percent), ended_ ? "\n" : "");
        std::fflush(stderr);
    }

    std::string program_, what_;
    std::int64_t shown_ = -1;
    bool ended_ = false;
};

/// A program's subcommand ("simulate", "replay", ...) and what runs it.
struct subcommand {
    std::string_view name;
    int (*run)(int argc, char** argv);
};

/// argv[1] picks one of `commands` and runs it (it parses argv from index 2); -h/--help here or
/// after the command prints `forms` (every command's usage) and returns 0. No command, or an
/// unknown one: command_line_error listing them.
inline int run_subcommand(std::span<const subcommand> commands, std::string_view forms, int argc, char** argv) {
    std::string names;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        names += i == 0 ? "" : i + 1 == commands.size() ? " or " : ", ";
        names += commands[i].name;
    }
    if (argc < 2) throw command_line_error{"a command is needed: " + names};
    const std::string_view command = argv[1];
    try {
        if (command == "-h" || command == "--help") throw help_requested{};
        for (const subcommand& c : commands)
            if (c.name == command) return c.run(argc, argv);
    } catch (const help_requested&) {
        std::cout << forms << '\n';
        return 0;
    }
    throw command_line_error{"unknown command " + std::string(command) + " (" + names + ")"};
}

/// The body of main(): run(argc, argv), with the contract of every example: a command_line_error
/// prints "<program>: <message>; <usage>" and exits 2; help_requested prints the usage and exits
/// 0; an input_error prints "<program>: <message>" and exits 2; anything else thrown (a bug or an exhausted resource, not bad input) prints
/// "<program>: <what>" and exits 1.
template <class Run>
int guarded_main(std::string_view program, std::string_view usage, int argc, char** argv, Run run) {
    try {
        return run(argc, argv);
    } catch (const help_requested&) {
        std::cout << usage << '\n';
        return 0;
    } catch (const command_line_error& e) {
        std::cerr << program << ": " << e.message << "; " << usage << '\n';
        return 2;
    } catch (const input_error& e) {
        std::cerr << program << ": " << e.message << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << program << ": " << e.what() << '\n';
        return 1;
    }
}

}  // namespace dnnplan_examples
