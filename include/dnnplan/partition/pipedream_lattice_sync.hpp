#pragma once
// LB1x: machine counting with the stages' synchronisation in aggregate, for the wide path with
// transfers (docs/design/pipedream-wide-graphs.md, section 3.1, "LB1x"). The window bound
// (pipedream_lattice_bounds.hpp) sees a stage's parameters only through its forced layers, which
// on many machines hold almost none of them (nasnetalarge: 4 % of W with 32 equal stages); this
// bound charges every parameter byte the synchronisation of the fewest replicas its stage can have.
//
// Why it is a lower bound. A plan of stages i = 1..k on r_i replicas, sum r_i <= M, priced at most
// T has r_i T >= C_i + q_(r_i) W_i for each stage (PipeDream's (C_i + q_r W_i) / r_i <= T;
// pipedream_cost.hpp, stage_time_s), so summed
//     M T >= C + sum_i q_(r_i) W_i.
// A stage after the first waits 2 out / (B r_i R) for the output of the cut it starts at, a
// nonempty ideal other than the whole graph, of output at least X (the least output bound over
// the positions of such ideals, [least source's compute, C - least sink's]), so
// r_i >= rho = ceil(2 X / (B R T)), and q_r rises with r.
// - rho >= 2: the stages after the first pay q_rho or more. The first stage on r_1 < rho replicas
//   holds compute C_1 <= r_1 T, so only layers with e_l <= r_1 T (e_l the least compute of an
//   ideal holding l), parameters at most W_e(r_1 T), and r_1 <= M - rho. So
//       M T >= C + q_rho W - max over r_1 in [1, min(rho - 1, M - rho)] of (q_rho - q_(r_1)) W_e(r_1 T)
//   (the maximum 0 over an empty range); with rho > M - 1 no plan has two stages.
// - rho = 1: a stage on r >= 2 replicas pays q_2 W_i or more, and one on a single replica uses
//   T = C_i + (T - C_i) of its machine, so
//       M T >= C + q_2 W - sum over the single-replica stages of (q_2 W_i - (T - C_i)).
//   A single-replica stage (p, p'] has p' - p = C_i <= T, holds only layers with e_l <= p' and
//   g_l >= p (W_i <= U(p, p')), and, after the first stage, starts at a cut of output at most
//   B R T / 2 and ends at one unless it ends the graph. The sum is at most the best total of
//   q_2 U - (T - length) over disjoint such intervals: a weighted interval scheduling DP on a grid
//   of positions (each position taken to its nearest node, whose output bound covers the cells on
//   both sides, U widened by half a cell at both ends and the length by a cell; the stages within
//   one cell counted together).
// A plan of one stage (no transfers) is priced min(C, (C + q_M W) / M) at best (for r >= 2 the
// time falls with r). The test admits T when some form allows it. Every T it refuses is below the
// optimum, so the bisection (largest_failing_threshold) returns a bound even where the test is
// not monotone (the rho = 1 form's total may fall as T grows). Straight pipelines and runs
// without a ratio are left to the window bound (the test admits every T).

#include <dnnplan/partition/ideal_lattice.hpp>
#include <dnnplan/partition/pipedream_lattice_bounds.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace dnnplan::detail {

/// The most cells of the rho = 1 form's grid of positions: 8 per layer, at most this many.
inline constexpr std::size_t aggregate_sync_grid_cells = 1024;

class aggregate_sync_bound {
public:
    /// `outputs`: the least output at the cut positions (window_relaxation::cut_output_steps).
    aggregate_sync_bound(const ideal_lattice& lattice, const wide_setting& setting, const std::vector<cut_output_step>& outputs)
        : setting_(setting), total_(lattice.total_compute_s()),
          nodes_(std::clamp<std::size_t>(8 * lattice.kept().order.size(), 8, aggregate_sync_grid_cells) + 1),
          cell_s_(total_ / static_cast<double>(nodes_ - 1)) {
        if (!setting_.activation_compression_ratio || setting_.straight || !(total_ > 0.0)) return;
        read_layers(lattice);
        read_outputs(outputs);
    }

    /// False: no partition is priced within t.
    [[nodiscard]] bool admits(double t) const {
        if (!setting_.activation_compression_ratio || setting_.straight) return true;
        const std::int32_t m = setting_.machines;
        if (std::min(total_, setting_.compute_time_s(total_, parameter_total_, m)) <= t * loose) return true;  // one stage
        const double rho_d = std::ceil(least_output_bytes_ / setting_.output_limit_bytes(1, t) / loose);  // 2 X / (B R T)
        if (rho_d <= 1.0) return static_cast<double>(m) * t * loose >= (total_ + setting_.sync_factor(2) * parameter_total_ - escape(t)) / loose;
        if (rho_d > static_cast<double>(m - 1)) return false;  // no room for a first stage and another
        const auto rho = static_cast<std::int32_t>(rho_d);
        const double q = setting_.sync_factor(rho);
        double relief = 0.0;  // the first stage on fewer replicas
        for (std::int32_t r1 = 1; r1 <= std::min(rho - 1, m - rho); ++r1)
            relief = std::max(relief, (q - setting_.sync_factor(r1)) * parameters_within(static_cast<double>(r1) * t * loose));
        return static_cast<double>(m) * t * loose >= (total_ + q * parameter_total_ - relief) / loose;
    }

private:
    static constexpr double loose = 1.0 + 1e-12;  // rounding favours admitting

    void read_layers(const ideal_lattice& lattice) {
        const auto& f = lattice.figures();
        const double slack = 1e-12 * total_;
        double least_source = std::numeric_limits<double>::infinity(), least_sink = least_source;
        for (const std::size_t l : lattice.kept().order) {
            const auto w = lattice.window_of(l, slack);
            layers_.push_back({w.first_with, w.last_without, f.parameter[l], f.compute[l]});
            parameter_total_ += f.parameter[l];
            if (lattice.kept().pred[l].empty()) least_source = std::min(least_source, f.compute[l] - slack);
            if (lattice.kept().succ[l].empty()) least_sink = std::min(least_sink, f.compute[l] - slack);
        }
        cuts_from_s_ = least_source, cuts_to_s_ = total_ - least_sink;
        std::vector<std::pair<double, double>> by_first;
        for (const auto& l : layers_) by_first.emplace_back(l.first_with, l.parameter_bytes);
        std::sort(by_first.begin(), by_first.end());
        parameters_upto_.assign(1, 0.0);
        for (const auto& [first_with, w] : by_first) {
            first_with_.push_back(first_with);
            parameters_upto_.push_back(parameters_upto_.back() + w);
        }
    }

    // X over the positions of the cuts a stage after the first starts at, and each node's bound
    // over the cells on both sides of it.
    void read_outputs(const std::vector<cut_output_step>& outputs) {
        double least = std::numeric_limits<double>::infinity();
        node_bytes_.assign(nodes_, std::numeric_limits<double>::infinity());
        for (const cut_output_step& s : outputs) {
            if (s.hi_s >= cuts_from_s_ && s.lo_s <= cuts_to_s_) least = std::min(least, s.bytes);
            const auto first = static_cast<std::size_t>(std::clamp(std::floor(s.lo_s / cell_s_) - 1.0, 0.0, static_cast<double>(nodes_ - 1)));
            const auto last = static_cast<std::size_t>(std::clamp(std::ceil(s.hi_s / cell_s_) + 1.0, 0.0, static_cast<double>(nodes_ - 1)));
            for (std::size_t k = first; k <= last; ++k)
                if (position(k) - cell_s_ <= s.hi_s && s.lo_s <= position(k) + cell_s_) node_bytes_[k] = std::min(node_bytes_[k], s.bytes);
        }
        least_output_bytes_ = std::isfinite(least) ? least : 0.0;
    }

    // U(i, j) for nodes i <= j: the parameters of the layers with g_l >= x_i - h/2 and
    // e_l <= x_j + h/2, as sums over (the last i, the first j) a layer allows: prefix in j along
    // each row, then suffix in i down each column.
    void build_parameter_table() const {
        table_.assign(nodes_ * nodes_, 0.0);
        small_.assign(nodes_, 0.0);
        for (const auto& l : layers_) {
            const double last_i = std::floor((l.last_without + 0.5 * cell_s_) / cell_s_);
            const double first_j = std::max(0.0, std::ceil((l.first_with - 0.5 * cell_s_) / cell_s_));
            if (last_i < 0.0 || first_j > static_cast<double>(nodes_ - 1)) continue;
            const auto i = static_cast<std::size_t>(std::min(last_i, static_cast<double>(nodes_ - 1)));
            const auto j = static_cast<std::size_t>(first_j);
            table_[i * nodes_ + j] += l.parameter_bytes;
            if (l.compute_s <= cell_s_ * loose)
                for (std::size_t k = j; k <= i; ++k) small_[k] += l.parameter_bytes;
        }
        // Sums of non-negative terms only (no differences), so rounding cannot lower U below the
        // parameters it must cover by more than about 2 nodes_ ulps of W.
        for (std::size_t i = 0; i < nodes_; ++i)
            for (std::size_t j = 1; j < nodes_; ++j) table_[i * nodes_ + j] += table_[i * nodes_ + j - 1];
        for (std::size_t i = nodes_ - 1; i-- > 0;)
            for (std::size_t j = 0; j < nodes_; ++j) table_[i * nodes_ + j] += table_[(i + 1) * nodes_ + j];
    }

    // The rho = 1 form's best total of q_2 U - (T - length) over disjoint single-replica stages.
    // Stages whose two cuts share a node lie within its cell: together their lengths are at most
    // a cell and each costs T, so they gain at most q_2 U_h(j) - (T - min(T, h)), U_h(j) the
    // parameters of the layers of U(j, j) with at most a cell of compute, added after the stages
    // that end there (where a cut may be: at node 0, or of output within the limit).
    [[nodiscard]] double escape(double t) const {
        const double q2 = setting_.sync_factor(2), limit = setting_.output_limit_bytes(1, t) * loose;
        const auto span = static_cast<std::size_t>(std::ceil(t / cell_s_)) + 1;
        if (table_.empty()) build_parameter_table();  // at the first test that needs it
        const auto within = [&](std::size_t j) {  // both cuts near node j: after the first stage, of output <= the limit
            if (j > 0 && node_bytes_[j] > limit) return 0.0;
            return std::max(0.0, q2 * small_[j] - (t - std::min(t, cell_s_)));
        };
        best_.assign(nodes_, 0.0);  // best_[j]: the best total of stages ending at nodes <= j
        best_[0] = within(0);
        for (std::size_t j = 1; j < nodes_; ++j) {
            double b = best_[j - 1];
            const bool end_ok = j + 1 == nodes_ || node_bytes_[j] <= limit;
            for (std::size_t i = j > span ? j - span : 0; i < j; ++i) {
                if (i > 0 && !(end_ok && node_bytes_[i] <= limit)) continue;  // a stage after the first
                const double length = std::min(t, position(j) - position(i) + cell_s_);
                b = std::max(b, best_[i] + q2 * table_[i * nodes_ + j] - (t - length));
            }
            best_[j] = b + within(j);
        }
        return best_[nodes_ - 1];
    }

    [[nodiscard]] double position(std::size_t k) const noexcept { return static_cast<double>(k) * cell_s_; }

    /// W_e(x): the parameters of the layers with e_l <= x.
    [[nodiscard]] double parameters_within(double x) const {
        const auto n = std::upper_bound(first_with_.begin(), first_with_.end(), x) - first_with_.begin();
        return parameters_upto_[static_cast<std::size_t>(n)];
    }

    struct layer_span {
        double first_with;    // e_l, shrunk against rounding
        double last_without;  // g_l, grown
        double parameter_bytes;
        double compute_s;
    };

    wide_setting setting_;
    double total_;
    std::size_t nodes_;  // grid nodes 0..nodes_ - 1 at positions k C / (nodes_ - 1)
    double cell_s_;
    double parameter_total_ = 0.0;
    double least_output_bytes_ = 0.0;  // X
    double cuts_from_s_ = 0.0, cuts_to_s_ = 0.0;
    std::vector<layer_span> layers_;
    std::vector<double> first_with_;       // e_l, ascending
    std::vector<double> parameters_upto_;  // parameters_upto_[i]: the parameters of the first i
    std::vector<double> node_bytes_;       // per node: at most the output of an ideal within a cell of it
    mutable std::vector<double> table_;    // U(i, j) at i * nodes_ + j, built when first needed
    mutable std::vector<double> small_;    // U_h(j), with the table
    mutable std::vector<double> best_;
};

}  // namespace dnnplan::detail
