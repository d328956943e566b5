#pragma once
// LBm: how far the stages before a cut can reach within their memory, for the wide path with a
// memory limit (docs/solvers/pipeline_plan.md, "Bounds"). The window bound checks each stage's
// memory on its own, through the layers its window forces in; this bound adds the memory of all
// the stages before a cut together.
//
// Why it is a lower bound. PipeDream's memory check (pipedream_cost.hpp) allows a stage on r
// replicas with a machines after it when its stashed bytes (activations and parameters) times
// ceil(a / r) are within the memory L; the last stage (a = 0) always fits. Stages before a cut, the
// next stage's devices_before u (idle machines counted, with use_fewer_machines), each have a >= M
// - u >= 1, so together they hold at most
//     K = sum over them of L / ceil(a_i / r_i)
// stashed bytes. They form an ideal I within K bytes, so C(I) <= p(K), the lesser of two reaches:
// I holds every layer l with g_l < C(I) (g_l: the most compute of an ideal without l;
// pipedream_lattice_cuts.hpp), so C(I) is at most the g_l of the first layer, in order of g_l, at
// which their stashed bytes summed exceed K (C when they never do); and at most the farthest of
// the exact points' least bytes, or the Lagrangian closures' bound (pipedream_lattice_closures.hpp;
// on nasnetalarge with half its bytes on 64 machines this one takes the bound from 11.9 to 12.7
// ms). The window relaxation computes both (window_relaxation::farthest_within_stashed_s).
// The stages after the cut run on at most M - u machines, each r_i T >= C_i + q_(r_i) W_i
// (PipeDream's time within T, q_r = 4 (r - 1) / (B r)), so
//     (M - u) T >= C - C(I) >= C - p(K),
// and the last stage, on r_k replicas (M - u of them without use_fewer_machines, at most that
// with it), holds the rest of the compute and every layer with e_l > C(I) (e_l: the least compute
// of an ideal holding l):
//     r_k T >= C - p(K) + q_(r_k) W_e(p(K)),   W_e(x): the parameters of the layers with e_l > x.
// A plan of one stage is priced exactly: (C + q_r W) / r on r = M replicas or, with
// use_fewer_machines, on any r whose ceil((M - r) / r) copies of the whole model fit. The test at T
// runs over the stages in order, keeping for each u the largest K of a sequence of stages that
// passes every cut's test (both tests loosen as K grows); it admits T when a last stage passes. On
// a straight pipeline every r is 1. Every test loosens as T grows, so the bisection
// (largest_failing_threshold) finds the bound.

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

class prefix_memory_bound {
public:
    /// `windows`: the window bound's relaxation of the same lattice and setting, for how far an
    /// ideal within some stashed bytes reaches (window_relaxation::farthest_within_stashed_s).
    prefix_memory_bound(const ideal_lattice& lattice, const wide_setting& setting, const window_relaxation& windows)
        : setting_(setting), windows_(&windows), total_(lattice.total_compute_s()) {
        if (!setting_.memory_bytes) return;
        const auto& f = lattice.figures();
        const double slack = 1e-12 * total_;
        std::vector<std::pair<double, double>> by_first_with;  // (e_l, parameters)
        for (const std::size_t l : lattice.kept().order) {
            by_first_with.emplace_back(lattice.window_of(l, slack).first_with, f.parameter[l]);  // e_l shrunk: loosens the tests
            stashed_total_ += f.activation[l] + f.parameter[l];
            parameter_total_ += f.parameter[l];
        }
        std::sort(by_first_with.begin(), by_first_with.end());
        parameters_from_.assign(by_first_with.size() + 1, 0.0);
        for (std::size_t i = by_first_with.size(); i-- > 0;) parameters_from_[i] = parameters_from_[i + 1] + by_first_with[i].second;
        for (const auto& [e, parameters] : by_first_with) first_with_.push_back(e);
    }

    /// False: no partition is priced within t (the header comment's tests).
    [[nodiscard]] bool admits(double t) const {
        if (!setting_.memory_bytes) return true;
        const std::int32_t m = setting_.machines;
        if (one_stage_admits(t)) return true;
        // best[u]: the largest K of the stages before a cut whose next stage has u machines before
        // it; best_upto[u] its maximum over u' <= u (idle machines between, use_fewer_machines).
        std::vector<double> best(static_cast<std::size_t>(m), -1.0), best_upto(static_cast<std::size_t>(m), 0.0);
        best[0] = 0.0;
        for (std::int32_t u = 1; u < m; ++u) {
            const auto ui = static_cast<std::size_t>(u);
            double k = -1.0;  // the largest K after a stage that ends at u, over its r (the cut's test loosens as K grows)
            for (std::int32_t r = 1; r <= std::min(u, max_replicas()); ++r) {
                const double before = setting_.fewer ? best_upto[ui - static_cast<std::size_t>(r)] : best[ui - static_cast<std::size_t>(r)];
                if (before >= 0.0) k = std::max(k, before + *setting_.memory_bytes / std::ceil(static_cast<double>(m - u) / r));
            }
            if (k >= 0.0) {
                const double p = reach_s(k);
                if (static_cast<double>(m - u) * t * loose >= (total_ - p) / loose) {
                    if (last_stage_admits(t, p, m - u)) return true;
                    best[ui] = k;
                }
            }
            best_upto[ui] = std::max(best[ui], best_upto[ui - 1]);
        }
        return false;
    }

private:
    static constexpr double loose = 1.0 + 1e-12;  // rounding favours admitting

    [[nodiscard]] std::int32_t max_replicas() const noexcept { return setting_.straight ? 1 : setting_.machines; }

    // One stage on r replicas: (C + q_r W) / r, its copies of the whole model within the memory.
    [[nodiscard]] bool one_stage_admits(double t) const {
        const std::int32_t m = setting_.machines;
        for (std::int32_t r = 1; r <= std::min(m, max_replicas()); ++r) {
            if (r != m && !setting_.fewer) continue;
            const bool fits = r == m || stashed_total_ * std::ceil(static_cast<double>(m - r) / r) <= *setting_.memory_bytes * loose;
            if (fits && setting_.compute_time_s(total_, parameter_total_, r) <= t * loose) return true;
        }
        return false;
    }

    // The last stage after stages that reach at most p, on r_k <= `machines` replicas (= without
    // use_fewer_machines).
    [[nodiscard]] bool last_stage_admits(double t, double p, std::int32_t machines) const {
        const double rest = std::max(total_ - p, 0.0), w = parameters_after(p);
        for (std::int32_t r = setting_.fewer ? 1 : machines; r <= std::min(machines, max_replicas()); ++r)
            if (static_cast<double>(r) * t * loose >= (rest + setting_.sync_factor(r) * w) / loose) return true;
        return false;
    }

    /// p(K): how far an ideal within K bytes reaches (both reaches of the header comment).
    [[nodiscard]] double reach_s(double k) const { return windows_->farthest_within_stashed_s(k * loose); }

    /// W_e(x): the parameters of the layers with e_l > x.
    [[nodiscard]] double parameters_after(double x) const {
        const auto at = std::upper_bound(first_with_.begin(), first_with_.end(), x) - first_with_.begin();
        return parameters_from_[static_cast<std::size_t>(at)];
    }

    wide_setting setting_;
    const window_relaxation* windows_;
    double total_;
    double stashed_total_ = 0.0, parameter_total_ = 0.0;
    std::vector<double> first_with_;       // e_l, ascending
    std::vector<double> parameters_from_;  // parameters_from_[i]: the parameters of the layers from i on
};

}  // namespace dnnplan::detail
