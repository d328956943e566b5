#pragma once
// Fits the loss coefficients gamma1..gamma5 of spotDNN's eq. (3) (Shang et al., IWQoS 2023):
//   f_loss = (gamma2 * b_w + gamma3) * sqrt((R + gamma4) * n) / (j + gamma1) + gamma5
// from (cluster, iteration, loss) samples; the cluster gives n, b_w (eq. (4)) and R (eq. (5))
// through model/asp_cluster.hpp. Without gamma4 the factor is sqrt(n) (the artifact's form).

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/ps_async.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/asp_cluster.hpp>
#include <dnnplan/model/convergence.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

/// The loss `loss` after `iteration` normalized iterations on a cluster of `workers` workers with
/// weighted-average batch `wa_batch` and convergence coefficient `convergence_coefficient`.
struct spotdnn_loss_sample {
    std::int64_t workers = 1;
    double wa_batch = 0.0;
    double convergence_coefficient = 0.0;
    double iteration = 0.0;
    double loss = 0.0;
};

/// A sample for the cluster `counts` of `model` (n, b_w, R by eqs. (4), (5)).
template <asynchronous_throughput_model M>
[[nodiscard]] spotdnn_loss_sample loss_sample_for(const M& model, std::span<const std::int32_t> counts, double iteration,
                                                  double loss) noexcept {
    const asp_rates r = asp_aggregate(model, counts);
    return {.workers = r.workers, .wa_batch = r.wa_batch, .convergence_coefficient = r.convergence_coefficient,
            .iteration = iteration, .loss = loss};
}

struct spotdnn_loss_fit_options {
    bool use_convergence_coefficient = false;  ///< fit gamma4 (needs 2+ distinct R)
    levenberg_marquardt_options solver{.max_iterations = 2000, .tolerance = 1e-12, .starts = 8, .seed = 1};
};

struct spotdnn_loss_fit_result {
    loss_coefficients coefficients{};          ///< accepted by spotdnn_loss_model
    std::vector<pinned_parameter> pinned{};
    nonlinear_fit fit{};                        ///< parameters (gamma1, gamma2, gamma3, gamma5[, gamma4])
    parameter_bounds bounds{};
    fit_quality quality{};
};

namespace detail::spotdnn_loss {

/// What the rules read from the samples, after checking each ("samples[i].<field>").
struct sample_summary {
    std::size_t distinct_batches = 0;  ///< of b_w
    std::size_t distinct_spreads = 0;  ///< of R
    double max_iteration = 1.0;        ///< the largest iteration, at least 1
};

inline sample_summary check_samples(std::span<const spotdnn_loss_sample> samples) {
    std::set<double> batches, spreads;
    sample_summary out;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::string at = "samples[";
        at += std::to_string(i);
        at += "].";
        detail::require_at_least(at + "workers", samples[i].workers, 1);
        detail::require_positive(at + "wa_batch", samples[i].wa_batch);
        detail::require_non_negative(at + "convergence_coefficient", samples[i].convergence_coefficient);
        detail::require_non_negative(at + "iteration", samples[i].iteration);
        detail::require_finite(at + "loss", samples[i].loss);
        batches.insert(samples[i].wa_batch);
        spreads.insert(samples[i].convergence_coefficient);
        out.max_iteration = std::max(out.max_iteration, samples[i].iteration);
    }
    out.distinct_batches = batches.size();
    out.distinct_spreads = spreads.size();
    return out;
}

/// Eq. (3) with the full parameters (gamma1, gamma2, gamma3, gamma5, gamma4); without gamma4
/// (`with_gamma4` false) the factor is sqrt(n).
struct loss_form {
    bool with_gamma4 = false;

    [[nodiscard]] double spread(const spotdnn_loss_sample& s, double gamma4) const {
        const double nn = static_cast<double>(s.workers);
        return with_gamma4 ? std::sqrt((s.convergence_coefficient + gamma4) * nn) : std::sqrt(nn);
    }
    [[nodiscard]] double predict(double g1, double g2, double g3, double g5, double gamma4,
                                 const spotdnn_loss_sample& s) const {
        return (g2 * s.wa_batch + g3) * spread(s, gamma4) / (s.iteration + g1) + g5;
    }
};

/// The start: for gamma1 on a grid of 10^-4..10 x the largest iteration (gamma4 = 0.5),
/// (gamma2, gamma3, gamma5) by linear least squares, since eq. (3) is linear in them once gamma1
/// and gamma4 are fixed; the grid point of the least residual sum of squares, as full parameters.
inline Eigen::VectorXd grid_start(std::span<const spotdnn_loss_sample> samples, const loss_form& form, bool pin_g2,
                                  double max_iteration) {
    const auto n = static_cast<Eigen::Index>(samples.size());
    Eigen::VectorXd best_start;
    double best_cost = std::numeric_limits<double>::infinity();
    for (int e = -4; e <= 1; ++e) {
        const double g1 = max_iteration * std::pow(10.0, e);
        Eigen::MatrixXd x(n, pin_g2 ? 2 : 3);
        Eigen::VectorXd y(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            const auto& s = samples[static_cast<std::size_t>(i)];
            const double h = form.spread(s, 0.5) / (s.iteration + g1);
            if (pin_g2) x.row(i) << h, 1.0;
            else x.row(i) << s.wa_batch * h, h, 1.0;
            y(i) = s.loss;
        }
        const linear_fit lf = linear_least_squares(x, y, "samples");
        if (lf.residual_sum_of_squares < best_cost) {
            best_cost = lf.residual_sum_of_squares;
            best_start = Eigen::VectorXd(5);
            if (pin_g2) best_start << g1, 0.0, lf.coefficients(0), lf.coefficients(1), 0.5;
            else best_start << g1, lf.coefficients(0), lf.coefficients(1), lf.coefficients(2), 0.5;
        }
    }
    return best_start;
}

/// The free parameters' places in the full vector: gamma1, [gamma2], gamma3, gamma5, [gamma4].
inline std::vector<int> free_indices(bool pin_g2, bool with_gamma4) {
    std::vector<int> free{0};
    if (!pin_g2) free.push_back(1);
    free.push_back(2);
    free.push_back(3);
    if (with_gamma4) free.push_back(4);
    return free;
}

/// gamma1 and gamma4 in [0, 100 x the largest iteration], the others unbounded.
inline parameter_bounds search_bounds(const std::vector<int>& free, double max_iteration) {
    const auto p = static_cast<Eigen::Index>(free.size());
    const double inf = std::numeric_limits<double>::infinity();
    parameter_bounds bounds{Eigen::VectorXd::Constant(p, -inf), Eigen::VectorXd::Constant(p, inf)};
    for (Eigen::Index i = 0; i < p; ++i) {
        const int j = free[static_cast<std::size_t>(i)];
        if (j == 0 || j == 4) {
            bounds.lower(i) = 0.0;
            bounds.upper(i) = 100.0 * max_iteration;  // finite so that multi-starts span it
        }
    }
    return bounds;
}

}  // namespace detail::spotdnn_loss

/// Bounded Levenberg-Marquardt (linear residuals in loss) with gamma1 >= 0 and gamma4 >= 0, the
/// bounds spotdnn_loss_model requires. Start: for gamma1 on a grid of 10^-4..10 x the
/// largest iteration, (gamma2, gamma3, gamma5) by linear least squares (eq. (3) is linear in
/// them once gamma1 and gamma4 are fixed); the best grid point, then seeded random starts.
/// Pinning: gamma2 = 0 when every sample has the same b_w (the batch term cannot be told from
/// gamma3). Throws invalid_input for a bad sample ("samples[i].<field>"), too few samples
/// ("samples": at least 4, or 5 with gamma4, less one when gamma2 is pinned), and gamma4
/// requested with fewer than 2 distinct R ("options.use_convergence_coefficient").
[[nodiscard]] inline spotdnn_loss_fit_result fit_spotdnn_loss(std::span<const spotdnn_loss_sample> samples,
                                                              const spotdnn_loss_fit_options& options = {}) {
    namespace sl = detail::spotdnn_loss;
    options.solver.validate("options.solver");
    const sl::sample_summary summary = sl::check_samples(samples);
    const bool g4 = options.use_convergence_coefficient;
    if (g4 && summary.distinct_spreads < 2)
        throw invalid_input("options.use_convergence_coefficient", "true",
                            "false when the samples have fewer than 2 distinct convergence coefficients R "
                            "(gamma4 cannot be told from gamma2 and gamma3)");
    const bool pin_g2 = summary.distinct_batches < 2;
    std::size_t need = g4 ? 5 : 4;
    if (pin_g2) --need;
    std::string what = "the ";
    what += std::to_string(need);
    what += " free loss coefficients of spotDNN eq. (3)";
    require_samples("samples", samples.size(), need, what);

    const sl::loss_form form{.with_gamma4 = g4};
    const Eigen::VectorXd best_start = sl::grid_start(samples, form, pin_g2, summary.max_iteration);
    const std::vector<int> free = sl::free_indices(pin_g2, g4);
    const auto p = static_cast<Eigen::Index>(free.size());
    spotdnn_loss_fit_result out;
    out.bounds = sl::search_bounds(free, summary.max_iteration);
    Eigen::VectorXd initial(p);
    for (Eigen::Index i = 0; i < p; ++i) initial(i) = best_start(free[static_cast<std::size_t>(i)]);
    const auto full = [&](const Eigen::VectorXd& v) {
        Eigen::VectorXd f = best_start;
        if (pin_g2) f(1) = 0.0;
        if (!g4) f(4) = 0.0;
        for (Eigen::Index i = 0; i < p; ++i) f(free[static_cast<std::size_t>(i)]) = v(i);
        return f;
    };
    const auto n = static_cast<Eigen::Index>(samples.size());
    const auto residual = [&](const Eigen::VectorXd& v, Eigen::VectorXd& r) {
        const Eigen::VectorXd f = full(v);
        for (Eigen::Index i = 0; i < n; ++i) {
            const auto& s = samples[static_cast<std::size_t>(i)];
            r(i) = form.predict(f(0), f(1), f(2), f(3), f(4), s) - s.loss;
        }
    };
    out.fit = bounded_least_squares(residual, n, initial, out.bounds, options.solver);
    const Eigen::VectorXd f = full(out.fit.parameters);
    out.coefficients.gamma1 = f(0);
    out.coefficients.gamma2 = f(1);
    out.coefficients.gamma3 = f(2);
    out.coefficients.gamma5 = f(3);
    if (g4) out.coefficients.gamma4 = f(4);
    if (pin_g2)
        out.pinned.push_back({.name = "gamma2", .value = 0.0,
                              .reason = "every sample has the same weighted-average batch b_w"});
    std::vector<double> observed, predicted;
    for (const auto& s : samples) {
        observed.push_back(s.loss);
        predicted.push_back(form.predict(f(0), f(1), f(2), f(3), f(4), s));
    }
    out.quality = assess_fit(observed, predicted, "samples");
    return out;
}

}  // namespace dnnplan
