#pragma once
// The command-line pieces the example planners share (one program per examples/*.cpp; this
// header is included, not built on its own). Their contract: a malformed command line or input
// file prints one line on stderr and exits with 2; an unexpected failure exits with 1.

#include <charconv>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>
#include <system_error>

namespace dnnplan_examples {

/// A malformed command line or an input file that cannot be read: the program prints `message`
/// (its own way: with or without the usage line) and exits with 2.
struct command_line_error {
    std::string message;
};

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

/// `file` opened for reading; throws command_line_error "cannot open <file>".
[[nodiscard]] inline std::ifstream open_input(const std::string& file) {
    std::ifstream in(file);
    if (!in) throw command_line_error{"cannot open " + file};
    return in;
}

/// The body of main(): run(argc, argv), or, when it throws (a bug or an exhausted resource, not
/// bad input), "<program>: <what>" on stderr and exit code 1.
template <class Run>
int guarded_main(std::string_view program, int argc, char** argv, Run run) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::cerr << program << ": " << e.what() << '\n';
        return 1;
    }
}

}  // namespace dnnplan_examples
