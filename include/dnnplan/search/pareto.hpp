#pragma once
// An exact two-objective Pareto frontier: the points no other point beats in one objective
// without losing in the other. Both coordinates are minimised (negate one to maximise it).
//
// Definitions (docs/solvers/vm_recommend.md, "Pareto frontier"). Point p weakly dominates q
// when p.first <= q.first and p.second <= q.second; p dominates q when it weakly dominates q
// and p != q. The frontier of a set S is { q in S : no p in S dominates q }, with points equal
// in both coordinates (ties) kept once: the first offered. Offering the points of S one by one,
// in any order, leaves exactly the frontier of S (up to which of tied points is kept), because
// weak dominance is transitive.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

namespace dnnplan {

template <class Payload>
class pareto_frontier {
public:
    struct point {
        double first = 0.0;
        double second = 0.0;
        Payload payload{};
    };

    /// Adds (first, second) unless a point held weakly dominates it; removes the points it
    /// dominates. Says whether it was added. O(size).
    bool offer(double first, double second, const Payload& payload) {
        if (weakly_dominated(first, second)) return false;
        // Points held are sorted by first ascending, second strictly descending.
        std::erase_if(points_, [&](const point& p) { return first <= p.first && second <= p.second; });
        const auto at = std::lower_bound(points_.begin(), points_.end(), first,
                                         [](const point& p, double value) { return p.first < value; });
        points_.insert(at, point{.first = first, .second = second, .payload = payload});
        return true;
    }

    /// True when a point held weakly dominates (first, second).
    [[nodiscard]] bool weakly_dominated(double first, double second) const noexcept {
        // The held point with the largest first <= `first` has the smallest second among them.
        const auto after = std::upper_bound(points_.begin(), points_.end(), first,
                                            [](double value, const point& p) { return value < p.first; });
        if (after == points_.begin()) return false;
        return std::prev(after)->second <= second;
    }

    /// True when a point held dominates every point q with q.first >= first and q.second >=
    /// second by a margin: p.first <= first - slack |first| and p.second <= second - slack
    /// |second|. A search prunes a subtree whose coordinates are bounded below by (first,
    /// second); the margin keeps rounding in those bounds from cutting a point of the frontier.
    [[nodiscard]] bool dominates_region(double first, double second, double slack) const noexcept {
        return weakly_dominated(first - slack * std::abs(first), second - slack * std::abs(second));
    }

    /// Sorted by first ascending (second descending).
    [[nodiscard]] const std::vector<point>& points() const noexcept { return points_; }
    [[nodiscard]] std::size_t size() const noexcept { return points_.size(); }
    [[nodiscard]] bool empty() const noexcept { return points_.empty(); }

private:
    std::vector<point> points_;
};

}  // namespace dnnplan
