// Fuzzes the Pollux trace readers (io/pollux_trace.hpp; the first byte picks the file): a reader
// accepts or throws the library's error, and every row it accepts is a valid sample.
#include <dnnplan/io/pollux_trace.hpp>

#include "fuzz_support.hpp"

#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::istringstream in{std::string(dnnplan_fuzz::text_of(data + 1, size - 1))};
    if (data[0] % 2 == 0) {
        std::vector<dnnplan::pollux_placement_row> rows;
        if (!dnnplan_fuzz::accepted([&] { rows = dnnplan::read_pollux_placements(in, 1 + data[0] / 2 % 9); })) return 0;
        for (const auto& r : rows)
            if (!dnnplan_fuzz::accepted([&] { r.sample().validate("row"); }))
                dnnplan_fuzz::violated("an accepted row is a valid sample", std::to_string(r.line));
    } else {
        std::vector<dnnplan::pollux_scalability_row> rows;
        (void)dnnplan_fuzz::accepted([&] { rows = dnnplan::read_pollux_scalability(in); });
    }
    return 0;
}
