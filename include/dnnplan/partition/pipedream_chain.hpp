#pragma once
// PipeDream's recurrence on a chain of layers with many machines, without its (state, machine)
// table: a search over the answer T with an exact feasibility test that is linear in the
// machines per state. Used by pipedream_partition() for one level without the memory
// constraint, transfers or a straight pipeline; the general solver covers every other case.
//
// Why a threshold test suffices. A stage of states (k, j] on r replicas takes
//     f(r) = (C + 4 (r - 1) W / (B r)) / r = C / r + K (r - 1) / r^2,  K = 4 W / B
// (reference note, section 3). As a function of x = 1 / r, f = (C + K) x - K x^2 is concave
// with its peak at x = (C + K) / (2K) >= 1/2, so f can rise only from r = 1 to r = 2 and falls
// for every r >= 2. At a threshold T the feasible replica counts are therefore {1 if C <= T}
// together with an upper run [a, M] (a = 1 when f(1) and f(2) are both <= T). For a chain:
//   - f grows with C and W for every r, so the stages (k, j] whose upper run starts at or below
//     r are a suffix k >= kappa_j(r) of the chain, and kappa_j(r) only grows with j;
//   - the fewest machines minU_k that finish the first k states under T only grow with k
//     (truncating a partition's last stage never slows a stage).
// The machine totals reachable for the first j states form a set U_j with
//     U_j = ((union of U_k over stages (k, j] with C <= T) + 1)  u  [alpha_j, M],
//     alpha_j = min over r of (r + minU at kappa_j(r)),
// so one pass over the states decides whether exactly M (or, with use_fewer_machines, at most
// M) machines can run every stage within T. Bisection on T (geometric, to a relative width of
// 1e-12) brackets PipeDream's answer; the partition found at the upper end is re-evaluated with
// PipeDream's own formula, so the time reported is the exact time of a real partition within
// 1e-12 of the optimum (the tests hold it to the plain recurrence at 1e-12).

#include <dnnplan/partition/antichain.hpp>
#include <dnnplan/model/concepts.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace dnnplan::detail {

/// One stage of a chain partition: states [first_state, end_state) on `replicas` machines.
struct chain_stage {
    std::size_t first_state = 0;
    std::size_t end_state = 0;
    std::int32_t replicas = 1;
};

class pipedream_chain_solver {
public:
    /// prefix compute (s) and parameter (bytes) of the states of a chain; bandwidth B.
    pipedream_chain_solver(const std::vector<double>& compute, const std::vector<double>& parameter, double bandwidth,
                           std::int32_t machines, bool fewer)
        : s_(compute.size()), m_(static_cast<std::size_t>(machines)), words_((m_ + 1 + 63) / 64), fewer_(fewer) {
        compute_.assign(s_ + 1, 0.0);
        parameter_.assign(s_ + 1, 0.0);
        for (std::size_t j = 0; j < s_; ++j) {  // index 0 stands for "before the first state"
            compute_[j + 1] = compute[j];
            parameter_[j + 1] = parameter[j];
        }
        inverse_.assign(m_ + 1, 0.0);
        sync_.assign(m_ + 1, 0.0);
        for (std::size_t r = 1; r <= m_; ++r) {
            const double rd = static_cast<double>(r);
            inverse_[r] = 1.0 / rd;
            sync_[r] = 4.0 * (rd - 1.0) / (bandwidth * rd);
        }
        prefix_pairs_.resize(2 * (s_ + 1));
        for (std::size_t i = 0; i <= s_; ++i) {
            prefix_pairs_[2 * i] = compute_[i];
            prefix_pairs_[2 * i + 1] = parameter_[i];
        }
        sets_.assign((s_ + 1) * words_, 0);
        min_used_.assign(s_ + 1, 0);
        window_left_.assign(s_ + 1, 0);
        upper_from_.assign(s_ + 1, 0);
        upper_replicas_.assign(s_ + 1, 0);
        pointer_.assign(m_ + 1, 0);
    }

    /// The optimal partition (empty if none: never, one stage on every machine is one), found
    /// by bisection on the answer whose upper end is always the time of a partition in hand:
    /// after a feasible test the partition it yields is timed and its time becomes the upper
    /// end (often well below the tested value). Stops when the ends are within `tolerance`
    /// (relative); `time_of` times a partition exactly (PipeDream's operation order).
    template <class TimeOf>
    [[nodiscard]] std::vector<chain_stage> solve(TimeOf&& time_of, double tolerance, std::int64_t& decisions) {
        const double lower = compute_[s_] / static_cast<double>(m_);  // no partition is faster
        std::vector<chain_stage> best = {{.first_state = 0, .end_state = s_, .replicas = static_cast<std::int32_t>(m_)}};
        double hi = time_of(best);
        double lo = lower * (1.0 - 1e-12);
        if (!(lo > 0.0) || !std::isfinite(hi)) return best;
        const auto try_at = [&](double t) {
            ++decisions;
            if (!decide(t)) return false;
            std::vector<chain_stage> found = reconstruct();
            const double v = time_of(found);
            if (v < hi) {
                hi = v;
                best = std::move(found);
            }
            hi = std::min(hi, t);  // t is feasible; `best` is within rounding of it
            return true;
        };
        // Upwards from the lower bound in growing steps, then bisection (geometric).
        for (double step = 0.01; hi > lo * (1.0 + tolerance); step *= 2.0) {
            const double t = lower * (1.0 + step);
            if (t >= hi) break;
            if (try_at(t)) break;
            lo = t;
        }
        while (hi > lo * (1.0 + tolerance)) {
            const double mid = std::sqrt(lo * hi);
            if (!(mid > lo && mid < hi)) break;
            if (!try_at(mid)) lo = mid;
        }
        return best;
    }

private:
    // f of the stage of states (k, j] in the 1-based indices above, on r replicas.
    [[nodiscard]] double stage_time(std::size_t k, std::size_t j, std::size_t r) const noexcept {
        const double c = compute_[j] - compute_[k];
        const double w = parameter_[j] - parameter_[k];
        return (c + w * sync_[r]) * inverse_[r];
    }
    // Every replica count from r to M runs the stage within t (f falls for r >= 2).
    [[nodiscard]] bool upper_from(std::size_t k, std::size_t j, std::size_t r, double t) const noexcept {
        if (stage_time(k, j, r) > t) return false;
        return r > 1 || m_ < 2 || stage_time(k, j, 2) <= t;
    }

    // The first i in [from, end) with ok(i) (ok is monotone: false then true), else end; by
    // galloping from `from`, so a short move costs a few tests and a long one a logarithm.
    template <class Ok>
    [[nodiscard]] static std::size_t advance(std::size_t from, std::size_t end, Ok&& ok) {
        if (from >= end || ok(from)) return from;
        std::size_t bad = from, step = 1;  // ok(bad) is false
        while (true) {
            const std::size_t probe = bad + step;
            if (probe >= end) break;
            if (ok(probe)) {
                end = probe;
                break;
            }
            bad = probe;
            step *= 2;
        }
        while (end - bad > 1) {  // ok(bad) false, ok(end) true or end is the limit
            const std::size_t mid = bad + (end - bad) / 2;
            (ok(mid) ? end : bad) = mid;
        }
        return end;
    }

    [[nodiscard]] std::uint64_t* set(std::size_t i) noexcept { return &sets_[i * words_]; }
    [[nodiscard]] bool has(std::size_t i, std::size_t u) const noexcept {
        return (sets_[i * words_ + u / 64] >> (u % 64)) & 1U;
    }

    // Whether every state can be run within t on exactly M machines (at most M with fewer).
    bool decide(double t) {
        start_decision();
        std::size_t left = 0;
        for (std::size_t j = 1; j <= s_; ++j) {
            left = slide_window(j, left, t);
            window_left_[j] = left;
            const std::size_t lowest = shift_window_into(j, left);
            const std::size_t alpha = upper_runs(j, t);
            if (alpha <= m_) {
                std::uint64_t* u = set(j);
                for (std::size_t b = alpha; b <= m_; ++b) u[b / 64] |= std::uint64_t{1} << (b % 64);
            }
            min_used_[j] = std::min(lowest, alpha);
            // minU only grows with j: once past M nothing later fits.
            if (min_used_[j] > m_) return false;
        }
        if (s_ >= 2 && fewer_) return min_used_[s_] <= m_;
        return has(s_, m_);
    }

    // U_0 = {0} (before the first state: 0 machines used), the pointers at 0, the window empty.
    void start_decision() {
        std::fill(pointer_.begin(), pointer_.end(), 0);
        std::fill_n(set(0), words_, 0);
        set(0)[0] = 1;
        min_used_[0] = 0;
        front_.clear();
        back_.clear();
        back_or_.assign(words_, 0);
        front_base_ = 0;
    }

    // The window of stages (k, j] with C <= t, as a two-stack sliding OR of the sets U_k: push
    // U_(j-1), then drop the k with C(k, j] > t. Returns the window's new left end.
    std::size_t slide_window(std::size_t j, std::size_t left, double t) {
        push_back(j - 1);
        while (left < j && compute_[j] - compute_[left] > t) {
            pop_front();
            ++left;
        }
        return left;
    }

    // U_j's one-replica part, (OR of the window) << 1 over bits 0..M; returns its lowest bit
    // (M + 1 when it is empty).
    std::size_t shift_window_into(std::size_t j, std::size_t left) {
        std::uint64_t* u = set(j);
        std::fill_n(u, words_, 0);
        if (left >= j) return m_ + 1;
        std::uint64_t carry = 0;
        for (std::size_t w = 0; w < words_; ++w) {
            const std::uint64_t v = window_or(w);
            u[w] = (v << 1) | carry;
            carry = v >> 63;
        }
        trim(u);
        return lowest_bit(u);
    }

    // The upper runs: alpha_j = min over r of r + minU at kappa_j(r) (M + 1: none), recording
    // the stage that attains it for reconstruct().
    std::size_t upper_runs(std::size_t j, double t) {
        std::size_t alpha = m_ + 1, alpha_from = 0, alpha_r = 0;
        for (std::size_t r = 1; r <= m_ && r < alpha; ++r) {
            const std::size_t k = pointer_[r];
            // kappa_j(r) >= its value at an earlier state and minU only grows with k, so
            // r + minU at the stale pointer is a lower bound: skip r without moving it.
            if (k < j && r + min_used_[k] >= alpha) continue;
            pointer_[r] = kappa(j, r, k, t);
            if (pointer_[r] == j) continue;
            const std::size_t candidate = r + min_used_[pointer_[r]];
            if (candidate < alpha) {
                alpha = candidate;
                alpha_from = pointer_[r];
                alpha_r = r;
            }
        }
        upper_from_[j] = alpha_from;
        upper_replicas_[j] = alpha_r;
        return alpha;
    }

    // kappa_j(r), advanced from k: the first k whose stage (k, j] has an upper run from r. For
    // r >= 2 the stage (k, j] fits within t iff (C_j + W_j q_r) - (C_k + W_k q_r) <= t r, and
    // the left side falls as k grows: advance kappa_j(r) while C_k + W_k q_r < target.
    [[nodiscard]] std::size_t kappa(std::size_t j, std::size_t r, std::size_t k, double t) const {
        if (r == 1) return advance(k, j, [&](std::size_t i) { return upper_from(i, j, 1, t); });
        const double q = sync_[r];  // q_r = 4 (r - 1) / (B r)
        const double target = compute_[j] + parameter_[j] * q - t * static_cast<double>(r);
        const double* pw = prefix_pairs_.data();
        k = advance(k, j, [&](std::size_t i) { return pw[2 * i] + pw[2 * i + 1] * q >= target; });
        // The multiplied form can differ from stage_time() by an ulp: settle on it.
        while (k < j && !upper_from(k, j, r, t)) ++k;
        return k;
    }

    // Follows the sets back from the last state: an upper run or a one-replica window stage.
    [[nodiscard]] std::vector<chain_stage> reconstruct() const {
        std::vector<chain_stage> stages;
        std::size_t j = s_;
        std::size_t used = (s_ >= 2 && fewer_ && !has(s_, m_)) ? min_used_[s_] : m_;
        while (j > 0) {
            std::size_t k = 0, r = 0;
            if (upper_replicas_[j] > 0 && used >= upper_replicas_[j] + min_used_[upper_from_[j]]) {
                k = upper_from_[j];
                r = used - min_used_[k];
            } else {
                for (k = window_left_[j]; k < j && !(used >= 1 && has(k, used - 1)); ++k) {
                }
                r = 1;
            }
            stages.push_back({.first_state = k, .end_state = j, .replicas = static_cast<std::int32_t>(r)});
            used -= r;
            j = k;
        }
        std::reverse(stages.begin(), stages.end());
        return stages;
    }

    void trim(std::uint64_t* u) const noexcept {
        const std::size_t bits = m_ + 1;  // 0..M
        if (bits % 64 != 0) u[words_ - 1] &= (std::uint64_t{1} << (bits % 64)) - 1;
    }
    [[nodiscard]] std::size_t lowest_bit(const std::uint64_t* u) const noexcept {
        for (std::size_t w = 0; w < words_; ++w)
            if (u[w] != 0) return w * 64 + static_cast<std::size_t>(std::countr_zero(u[w]));
        return m_ + 1;
    }

    // Two-stack sliding window OR: back_ holds pushed sets (their OR in back_or_), front_ holds
    // suffix ORs of the sets moved over from back_.
    void push_back(std::size_t i) {
        back_.push_back(i);
        const std::uint64_t* u = set(i);
        for (std::size_t w = 0; w < words_; ++w) back_or_[w] |= u[w];
    }
    void pop_front() {
        if (front_base_ * words_ >= front_.size()) {
            // Move back_ over as suffix ORs.
            const std::size_t n = back_.size();
            front_.assign(n * words_, 0);
            for (std::size_t e = n; e-- > 0;) {
                const std::uint64_t* u = set(back_[e]);
                for (std::size_t w = 0; w < words_; ++w)
                    front_[e * words_ + w] = u[w] | (e + 1 < n ? front_[(e + 1) * words_ + w] : 0);
            }
            front_base_ = 0;
            back_.clear();
            std::fill(back_or_.begin(), back_or_.end(), 0);
        }
        ++front_base_;
    }
    [[nodiscard]] std::uint64_t window_or(std::size_t w) const noexcept {
        const std::uint64_t f = front_base_ * words_ < front_.size() ? front_[front_base_ * words_ + w] : 0;
        return f | back_or_[w];
    }

    std::size_t s_, m_, words_;
    bool fewer_;
    std::vector<double> compute_, parameter_, inverse_, sync_;
    std::vector<double> prefix_pairs_;  // (C_k, W_k) interleaved, for the pointer sweeps
    std::vector<std::uint64_t> sets_;
    std::vector<std::size_t> min_used_, window_left_, upper_from_, upper_replicas_, pointer_;
    std::vector<std::size_t> back_;
    std::vector<std::uint64_t> back_or_, front_;
    std::size_t front_base_ = 0;
};

}  // namespace dnnplan::detail
