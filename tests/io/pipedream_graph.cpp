// PipeDream graph.txt reader: the shipped profiles of four models (tests/fixtures/pipedream,
// from msr-fiddle/pipedream, MIT) parse with the file's node and edge counts and figures; every
// malformed line is a parse_error naming its line. (The JSON form of layer_graph is tested in
// tests/io/pipeline_plan_json.cpp.)

#include <dnnplan/io/pipedream_graph.hpp>

#include <catch2/catch.hpp>

#include "../support/pipedream_fixtures.hpp"

#include <cstddef>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using dnnplan_test::pipedream_fixture_path;
using dnnplan_test::same;
using dnnplan_test::pipedream_fixture_text;
using dnnplan_test::pipedream_node;

// Node and edge lines counted independently of the reader: edge lines start with a tab.
std::pair<std::size_t, std::size_t> count_lines(const std::string& text) {
    std::istringstream in(text);
    std::size_t nodes = 0, edges = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("node")) ++nodes;
        else if (line.starts_with('\t')) ++edges;
    }
    return {nodes, edges};
}

std::optional<dnnplan::parse_error> parse_failure(std::string_view text) {
    try {
        (void)dnnplan::parse_pipedream_graph(text);
    } catch (const dnnplan::parse_error& e) {
        return e;
    }
    return std::nullopt;
}

// Expects a parse_error at `where` whose message is exactly `message`.
void expect_error(std::string_view text, const std::string& where, const std::string& message) {
    INFO("text:\n" << text);
    const auto e = parse_failure(text);
    REQUIRE(e.has_value());
    CHECK(e->where() == where);
    CHECK(std::string(e->what()) == "parse error at " + where + ": " + message);
}

const std::string three_nodes = pipedream_node("node1") + pipedream_node("node2") + pipedream_node("node3");

}  // namespace

// ---- the shipped profiles ------------------------------------------------------------------------

TEST_CASE("pipedream graph: every fixture parses with the file's node and edge counts", "[pipedream]") {
    struct expected_counts {
        const char* model;
        std::size_t nodes;
        std::size_t edges;
    };
    for (const auto& [model, nodes, edges] : {expected_counts{"vgg16", 41, 41}, expected_counts{"resnet50", 177, 193},
                                              expected_counts{"alexnet", 23, 23}, expected_counts{"gnmt", 48, 58}}) {
        INFO(model);
        const std::string text = pipedream_fixture_text(model);
        CHECK(count_lines(text) == std::pair<std::size_t, std::size_t>(nodes, edges));
        const auto g = dnnplan::parse_pipedream_graph(text);
        CHECK(g.size() == nodes);
        CHECK(g.edges().size() == edges);

        std::ifstream in(pipedream_fixture_path(model));
        const auto from_stream = dnnplan::parse_pipedream_graph(in);
        CHECK(same(from_stream, g));
    }
}

TEST_CASE("pipedream graph: vgg16's first node, ms converted to s", "[pipedream]") {
    // node11 -- MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False) --
    //   forward_compute_time=2.211, backward_compute_time=2.788, activation_size=205520896.000, parameter_size=0.000
    const auto g = dnnplan::parse_pipedream_graph(pipedream_fixture_text("vgg16"));
    const auto& first = g.at(0);
    CHECK(first.id == "node11");
    CHECK(first.description == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
    CHECK(first.forward_s == 2.211 / 1000.0);
    CHECK(first.backward_s == 2.788 / 1000.0);
    CHECK(first.forward_s == Approx(0.002211).epsilon(1e-12));
    CHECK(first.activation_bytes == 205520896.0);
    CHECK(first.parameter_bytes == 0.0);
    CHECK_FALSE(first.optimizer_state_bytes.has_value());

    // A chain from the Input node node1 to the classifier node41; node32 fans out twice.
    const auto input = g.find("node1");
    REQUIRE(input.has_value());
    CHECK(g.at(*input).description == "Input");
    CHECK(g.predecessors(*input).empty());
    const auto last = g.find("node41");
    REQUIRE(last.has_value());
    CHECK(g.successors(*last).empty());
    CHECK(g.at(*last).parameter_bytes == 16388000.0);
    const auto fan_out = g.find("node32");
    REQUIRE(fan_out.has_value());
    CHECK(g.successors(*fan_out).size() == 2);
}

TEST_CASE("pipedream graph: a list activation_size is summed (gnmt's LSTMs)", "[pipedream]") {
    // node7 -- LSTM(2048, 1024) -- ..., activation_size=[6291456.0; 131072.0; 131072.0], parameter_size=50364416.000
    const auto g = dnnplan::parse_pipedream_graph(pipedream_fixture_text("gnmt"));
    const auto lstm = g.find("node7");
    REQUIRE(lstm.has_value());
    CHECK(g.at(*lstm).description == "LSTM(2048, 1024)");
    CHECK(g.at(*lstm).activation_bytes == 6291456.0 + 131072.0 + 131072.0);
    CHECK(g.at(*lstm).forward_s == 3.190 / 1000.0);
    CHECK(g.at(*lstm).parameter_bytes == 50364416.0);
    // A description with nested parentheses and commas survives whole.
    const auto attention = g.find("node23");
    REQUIRE(attention.has_value());
    CHECK(g.at(*attention).description.starts_with("RecurrentAttention(  (rnn): LSTM(1024, 1024)"));
    CHECK(g.at(*attention).description.ends_with("(dropout): Dropout(p=0))"));

    const auto small = dnnplan::parse_pipedream_graph(
        "n -- Split -- forward_compute_time=0, backward_compute_time=0, activation_size=[1; 2.5;3 ], parameter_size=0\n");
    CHECK(small.at(0).activation_bytes == 6.5);
    const auto single = dnnplan::parse_pipedream_graph(
        "n -- Split -- forward_compute_time=0, backward_compute_time=0, activation_size=[7], parameter_size=0\n");
    CHECK(single.at(0).activation_bytes == 7.0);
}

TEST_CASE("pipedream graph: resnet50 branches", "[pipedream]") {
    const auto g = dnnplan::parse_pipedream_graph(pipedream_fixture_text("resnet50"));
    std::size_t fan_out = 0, fan_in = 0, additions = 0;
    for (std::size_t i = 0; i < g.size(); ++i) {
        if (g.successors(i).size() > 1) ++fan_out;
        if (g.predecessors(i).size() > 1) ++fan_in;
        if (g.at(i).description == "Add(inplace)") {
            ++additions;
            CHECK(g.predecessors(i).size() == 2);  // the residual and the convolution path
        }
    }
    CHECK(additions == 16);  // one per bottleneck block
    // The 16 blocks, plus AvgPool2d feeding View(-1) both directly and through Size(0).
    CHECK(fan_out == 17);
    CHECK(fan_in == 17);
}

// ---- the accepted variations -------------------------------------------------------------------

TEST_CASE("pipedream graph: layout rules", "[pipedream]") {
    SECTION("attributes split at the last \" -- \": descriptions may contain it") {
        const auto g = dnnplan::parse_pipedream_graph(
            "node1 -- Weird -- layer, with -- separators -- parameter_size=4, activation_size=3, "
            "backward_compute_time=2, forward_compute_time=1\n");
        CHECK(g.at(0).description == "Weird -- layer, with -- separators");
        CHECK(g.at(0).forward_s == 0.001);
        CHECK(g.at(0).backward_s == 0.002);
        CHECK(g.at(0).activation_bytes == 3.0);
        CHECK(g.at(0).parameter_bytes == 4.0);
    }
    SECTION("blank lines, CRLF, spaces or tabs before edges, no final newline; file order kept") {
        const auto g = dnnplan::parse_pipedream_graph("\n" + pipedream_node("b") + "\r\n" + pipedream_node("a") + "   \n" + "\tb -- a\r\n" +
                                                      "  \t \n" + pipedream_node("c") + "    a -- c");
        REQUIRE(g.size() == 3);
        CHECK(g.at(0).id == "b");
        CHECK(g.at(1).id == "a");
        CHECK(g.at(2).id == "c");  // a node line after edge lines is accepted
        CHECK(g.edges() == std::vector<dnnplan::layer_edge>{{0, 1}, {1, 2}});
    }
    SECTION("numbers: exponents and integers; zero") {
        const auto g = dnnplan::parse_pipedream_graph(pipedream_node(
            "n", "forward_compute_time=1e3, backward_compute_time=0, activation_size=2.5E2, parameter_size=7"));
        CHECK(g.at(0).forward_s == 1.0);
        CHECK(g.at(0).backward_s == 0.0);
        CHECK(g.at(0).activation_bytes == 250.0);
        CHECK(g.at(0).parameter_bytes == 7.0);
    }
    SECTION("an empty text is an empty graph") {
        CHECK(dnnplan::parse_pipedream_graph("").size() == 0);
        CHECK(dnnplan::parse_pipedream_graph("\n\n").size() == 0);
    }
}

// ---- every malformed line names its line ---------------------------------------------------------

TEST_CASE("pipedream graph: malformed node lines", "[pipedream]") {
    SECTION("truncated line: no separator at all") {
        expect_error(three_nodes + "node4 -- Conv2d(3", "line 4",
                     "expected \"node<k> -- <description> -- forward_compute_time=<ms>, ...\", found "
                     "\"node4 -- Conv2d(3\" (one \" -- \"; the attributes need a second)");
        expect_error("node1\n", "line 1",
                     "expected \"node<k> -- <description> -- forward_compute_time=<ms>, ...\", found \"node1\" "
                     "(no \" -- \")");
    }
    SECTION("truncated line: cut inside the attributes") {
        expect_error(pipedream_node("node1") + "node2 -- ReLU -- forward_compute_time=1.0, backward_comp", "line 2",
                     "expected an attribute <key>=<value>, found \"backward_comp\"");
        expect_error(pipedream_node("node1") + "node2 -- ReLU -- forward_compute_time=1.0, backward_compute_time=", "line 2",
                     "expected a finite number for backward_compute_time, found \"backward_compute_time=\"");
        expect_error("node2 -- ReLU -- \n", "line 1",
                     "expected \"node<k> -- <description> -- forward_compute_time=<ms>, ...\", found "
                     "\"node2 -- ReLU --\" (no attributes after the last \" --\")");
        expect_error("node2 -- ReLU -- forward_compute_time=1,, backward_compute_time=1", "line 1",
                     "expected an attribute <key>=<value>, found \"\" (an empty attribute)");
    }
    SECTION("missing separator: a hyphen too few") {
        expect_error(pipedream_node("node1") + "\n" +
                         "node2 -- ReLU - forward_compute_time=1, backward_compute_time=1, activation_size=1, "
                         "parameter_size=1\n",
                     "line 3",
                     "expected \"node<k> -- <description> -- forward_compute_time=<ms>, ...\", found \"node2 -- ReLU - "
                     "forward_compute_time=1, backward_compute_time=1, activation_size...\" (one \" -- \"; "
                     "the attributes need a second)");
    }
    SECTION("bad number") {
        expect_error(three_nodes + pipedream_node("node4", "forward_compute_time=abc, backward_compute_time=2.0, "
                                                 "activation_size=100.0, parameter_size=10.0"),
                     "line 4", "expected a finite number for forward_compute_time, found \"forward_compute_time=abc\"");
        expect_error(pipedream_node("n", "forward_compute_time=1.5ms, backward_compute_time=2.0, activation_size=100.0, "
                               "parameter_size=10.0"),
                     "line 1", "expected a finite number for forward_compute_time, found \"forward_compute_time=1.5ms\"");
        for (const std::string bad : {"nan", "inf", "-inf", "1e999", "+1", "0x10", "1 2"}) {
            INFO(bad);
            expect_error(pipedream_node("n", "forward_compute_time=1, backward_compute_time=1, activation_size=1, parameter_size=" +
                                       bad),
                         "line 1", "expected a finite number for parameter_size, found \"parameter_size=" + bad + "\"");
        }
        expect_error(pipedream_node("n", "forward_compute_time=1, backward_compute_time=1, activation_size=[1; x], "
                               "parameter_size=1"),
                     "line 1", "expected a finite number for activation_size, found \"activation_size=[1; x]\"");
        expect_error(pipedream_node("n", "forward_compute_time=1, backward_compute_time=1, activation_size=[], parameter_size=1"),
                     "line 1", "expected a finite number for activation_size, found \"activation_size=[]\"");
        expect_error(pipedream_node("n", "forward_compute_time=1, backward_compute_time=1, activation_size=[1; 2, parameter_size=1"),
                     "line 1",
                     "expected a list \"[<bytes>; <bytes>; ...]\", found \"activation_size=[1; 2\" (no closing ])");
    }
    SECTION("negative size or time") {
        expect_error(pipedream_node("node1") + pipedream_node("node2", "forward_compute_time=1, backward_compute_time=1, "
                                                   "activation_size=-4, parameter_size=1"),
                     "line 2", "expected a number >= 0 for activation_size, found \"activation_size=-4\"");
        expect_error(pipedream_node("node1", "forward_compute_time=1, backward_compute_time=-0.5, activation_size=4, "
                                   "parameter_size=1"),
                     "line 1", "expected a number >= 0 for backward_compute_time, found \"backward_compute_time=-0.5\"");
        expect_error(pipedream_node("node1", "forward_compute_time=1, backward_compute_time=1, activation_size=[4; -1], "
                                   "parameter_size=1"),
                     "line 1", "expected a number >= 0 for activation_size, found \"activation_size=[4; -1]\"");
    }
    SECTION("unknown, missing and repeated keys") {
        expect_error(pipedream_node("node1", "forward_compute_time=1, backward_compute_time=1, activation_size=4, "
                                   "parameter_size=1, stage_id=2"),
                     "line 1",
                     "expected one of the attributes forward_compute_time, backward_compute_time, activation_size and "
                     "parameter_size, found \"stage_id\"");
        expect_error(pipedream_node("node1") + pipedream_node("node2", "forward_compute_time=1, backward_compute_time=1, activation_size=4"),
                     "line 2",
                     "expected the attributes forward_compute_time, backward_compute_time, activation_size and "
                     "parameter_size, found no parameter_size");
        expect_error(pipedream_node("node1", "forward_compute_time=1, forward_compute_time=1, activation_size=4, parameter_size=1"),
                     "line 1", "expected each attribute once, found forward_compute_time again");
    }
    SECTION("node ids") {
        expect_error(three_nodes + pipedream_node("node2"), "line 4",
                     "expected a new node id, found node2, already defined at line 2");
        expect_error(pipedream_node("node 1"), "line 1", "expected a node id without spaces, found \"node 1\"");
    }
}

TEST_CASE("pipedream graph: malformed edge lines", "[pipedream]") {
    SECTION("edge to an unknown node, or to one defined later") {
        expect_error(three_nodes + "\tnode1 -- node2\n\tnode2 -- node9\n", "line 5",
                     "expected an edge between nodes defined on earlier lines, found node9, which no earlier node line "
                     "defines");
        expect_error(pipedream_node("node1") + "\tnode1 -- node2\n" + pipedream_node("node2"), "line 2",
                     "expected an edge between nodes defined on earlier lines, found node2, which no earlier node line "
                     "defines");
    }
    SECTION("not two ids") {
        expect_error(three_nodes + "\tnode1 - node2\n", "line 4",
                     "expected an edge \"<TAB>node<a> -- node<b>\", found \"node1 - node2\"");
        expect_error(three_nodes + "\tnode1 -- node2 -- node3\n", "line 4",
                     "expected an edge \"<TAB>node<a> -- node<b>\", found \"node1 -- node2 -- node3\"");
        expect_error(three_nodes + "\tnode1 -- \n", "line 4", "expected an edge \"<TAB>node<a> -- node<b>\", found \"node1 --\"");
        expect_error(three_nodes + "  " + pipedream_node("node4"), "line 4",
                     "expected an edge \"<TAB>node<a> -- node<b>\", found \"node4 -- Linear(in_features=4, "
                     "out_features=4) -- forward_compute_time=1.0, back...\"");
    }
    SECTION("self-loop and duplicate edge") {
        expect_error(three_nodes + "\tnode1 -- node2\n\tnode3 -- node3\n", "line 5",
                     "expected an edge between two different nodes, found node3 -- node3 (a self-loop)");
        expect_error(three_nodes + "\tnode1 -- node2\n\tnode2 -- node3\n\tnode1 -- node2\n", "line 6",
                     "expected each edge once, found node1 -- node2 again");
    }
    SECTION("cycle: the line of the first edge that closes one") {
        expect_error(three_nodes + pipedream_node("node4") + "\tnode1 -- node2\n\tnode2 -- node3\n\tnode3 -- node4\n"
                                                   "\tnode4 -- node2\n\tnode4 -- node1\n",
                     "line 8",
                     "expected an acyclic graph, found the edge node4 -- node2, which closes a cycle through node4");
        expect_error(three_nodes + "\tnode2 -- node1\n\tnode1 -- node2\n", "line 5",
                     "expected an acyclic graph, found the edge node1 -- node2, which closes a cycle through node1");
    }
    SECTION("the first error wins") {
        expect_error(three_nodes + "\tnode1 -- node9\n" + pipedream_node("node1"), "line 4",
                     "expected an edge between nodes defined on earlier lines, found node9, which no earlier node line "
                     "defines");
    }
}

TEST_CASE("pipedream graph: line numbers count blank lines; stream and text agree", "[pipedream]") {
    const std::string text = "\n\n" + pipedream_node("node1") + "\n" + pipedream_node("node1");
    expect_error(text, "line 5", "expected a new node id, found node1, already defined at line 3");
    std::istringstream in(text);
    try {
        (void)dnnplan::parse_pipedream_graph(in);
        FAIL("no error");
    } catch (const dnnplan::parse_error& e) {
        CHECK(e.where() == "line 5");
    }
}

TEST_CASE("pipedream graph: parse errors are dnnplan::error", "[pipedream]") {
    CHECK_THROWS_AS(dnnplan::parse_pipedream_graph("garbage"), dnnplan::error);
    CHECK_THROWS_AS(dnnplan::parse_pipedream_graph("garbage"), dnnplan::parse_error);
}

TEST_CASE("fuzz finding: invalid UTF-8 in a node name is an error naming the line", "[pipedream][fuzz]") {
    // tests/fixtures/fuzz_findings/README.md, pipedream_graph-14: the name was accepted and printed.
    std::ifstream in(std::string(DNNPLAN_TEST_FIXTURES_DIR) + "/fuzz_findings/pipedream_graph-14-invalid-utf8.txt");
    REQUIRE(in);
    try {
        (void)dnnplan::parse_pipedream_graph(in);
        FAIL("accepted");
    } catch (const dnnplan::parse_error& e) {
        CHECK(e.where() == "line 1");
        CHECK_THAT(std::string(e.what()), Catch::Contains("UTF-8"));
    }
}
