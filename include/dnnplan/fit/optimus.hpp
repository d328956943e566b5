#pragma once
// Fitters of Optimus's speed models and loss curve (Peng et al., EuroSys 2018, Section 4;
// model/optimus.hpp). Speeds: non-negative least squares on the form in which the model is
// linear in theta (1/f for synchronous, w/f for asynchronous training), as Optimus does
// ("we use NNLS ... to fit"). Loss: bounded non-linear least squares with later points
// weighted more.

#include <dnnplan/core/error.hpp>
#include <dnnplan/core/detail/validate.hpp>
#include <dnnplan/fit/least_squares.hpp>
#include <dnnplan/fit/nonlinear.hpp>
#include <dnnplan/fit/quality.hpp>
#include <dnnplan/model/optimus.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <vector>

namespace dnnplan {

/// One measured speed: `steps_per_s` with `parameter_servers` PS and `workers` workers.
struct optimus_speed_sample {
    std::int64_t parameter_servers = 1;
    std::int64_t workers = 1;
    double steps_per_s = 0.0;
};

struct optimus_sync_fit {
    optimus_sync_speed model{};
    linear_fit linear{};     ///< of step time 1/f (seconds) on [M/w, 1, w/p, w, p]
    fit_quality quality{};   ///< of steps_per_s
};

struct optimus_async_fit {
    optimus_async_speed model{};
    linear_fit linear{};     ///< of w/f (seconds per step per worker) on [1, w/p, w, p]
    fit_quality quality{};   ///< of steps_per_s
};

namespace detail::optimus {

inline void check_speed_samples(std::span<const optimus_speed_sample> samples, std::size_t need, std::string_view what) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::string at = "samples[";
        at += std::to_string(i);
        at += "].";
        require_at_least(at + "parameter_servers", samples[i].parameter_servers, 1);
        require_at_least(at + "workers", samples[i].workers, 1);
        require_positive(at + "steps_per_s", samples[i].steps_per_s);
    }
    require_samples("samples", samples.size(), need, what);
}

}  // namespace detail::optimus

/// Optimus eq. (3): 1/f = theta0 M/w + theta1 + theta2 w/p + theta3 w + theta4 p is linear in
/// theta, so NNLS of the measured step times 1/f gives theta >= 0 (a least-squares fit of
/// step time, not of speed). Needs 5 samples; the fit is unique only when the 5 columns are
/// independent over the samples (at least 3 worker counts and 2 PS counts).
[[nodiscard]] inline optimus_sync_fit fit_optimus_sync(std::span<const optimus_speed_sample> samples, double global_batch) {
    detail::require_positive("global_batch", global_batch);
    detail::optimus::check_speed_samples(samples, 5, "the 5 coefficients theta0..theta4 of Optimus's synchronous model");
    const auto n = static_cast<Eigen::Index>(samples.size());
    Eigen::MatrixXd x(n, 5);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto& s = samples[static_cast<std::size_t>(i)];
        const double p = static_cast<double>(s.parameter_servers), w = static_cast<double>(s.workers);
        x.row(i) << global_batch / w, 1.0, w / p, w, p;
        y(i) = 1.0 / s.steps_per_s;
    }
    optimus_sync_fit out;
    out.linear = nonnegative_least_squares(x, y, "samples");
    const auto& c = out.linear.coefficients;
    out.model = {.theta0 = c(0), .theta1 = c(1), .theta2 = c(2), .theta3 = c(3), .theta4 = c(4), .global_batch = global_batch};
    std::vector<double> observed, predicted;
    for (const auto& s : samples) {
        observed.push_back(s.steps_per_s);
        predicted.push_back(out.model.steps_per_s(s.parameter_servers, s.workers));
    }
    out.quality = assess_fit(observed, predicted, "samples");
    return out;
}

/// Optimus eq. (4): w/f = theta0 + theta1 w/p + theta2 w + theta3 p, linear in theta: NNLS of
/// the measured w/f (each worker's step time). Needs 4 samples.
[[nodiscard]] inline optimus_async_fit fit_optimus_async(std::span<const optimus_speed_sample> samples) {
    detail::optimus::check_speed_samples(samples, 4, "the 4 coefficients theta0..theta3 of Optimus's asynchronous model");
    const auto n = static_cast<Eigen::Index>(samples.size());
    Eigen::MatrixXd x(n, 4);
    Eigen::VectorXd y(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto& s = samples[static_cast<std::size_t>(i)];
        const double p = static_cast<double>(s.parameter_servers), w = static_cast<double>(s.workers);
        x.row(i) << 1.0, w / p, w, p;
        y(i) = w / s.steps_per_s;
    }
    optimus_async_fit out;
    out.linear = nonnegative_least_squares(x, y, "samples");
    const auto& c = out.linear.coefficients;
    out.model = {.theta0 = c(0), .theta1 = c(1), .theta2 = c(2), .theta3 = c(3)};
    std::vector<double> observed, predicted;
    for (const auto& s : samples) {
        observed.push_back(s.steps_per_s);
        predicted.push_back(out.model.steps_per_s(s.parameter_servers, s.workers));
    }
    out.quality = assess_fit(observed, predicted, "samples");
    return out;
}

/// A point of the training-loss curve.
struct loss_sample {
    double step = 0.0;
    double loss = 0.0;
};

struct optimus_loss_fit {
    optimus_loss_curve curve{};
    nonlinear_fit fit{};      ///< on (beta0, beta1, beta2), weighted residuals
    parameter_bounds bounds{};
    fit_quality quality{};    ///< unweighted, of the loss
};

/// Fits l(k) = 1 / (beta0 k + beta1) + beta2 with beta >= 0 (beta1 >= 1e-12) by bounded
/// Levenberg-Marquardt on weighted residuals sqrt(w_i) (l(k_i) - loss_i). Weights: w_i =
/// rank_i / N, rank 1 for the earliest step and N for the latest, so the tail that predicts
/// the remaining steps counts most (Optimus fits online and weighs later points more; the paper
/// does not give its weights, so this linear ramp is dnnplan's choice). Seeded multi-start from
/// `options`. Needs 3 samples.
[[nodiscard]] inline optimus_loss_fit fit_optimus_loss(std::span<const loss_sample> samples,
                                                       const levenberg_marquardt_options& options = {
                                                           .max_iterations = 2000, .tolerance = 1e-12, .starts = 8, .seed = 1}) {
    for (std::size_t i = 0; i < samples.size(); ++i) {
        std::string at = "samples[";
        at += std::to_string(i);
        at += "].";
        detail::require_non_negative(at + "step", samples[i].step);
        detail::require_finite(at + "loss", samples[i].loss);
    }
    require_samples("samples", samples.size(), 3, "the 3 coefficients beta0..beta2 of Optimus's loss curve");
    const std::size_t n = samples.size();
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return samples[a].step < samples[b].step; });
    std::vector<double> weight(n);
    for (std::size_t r = 0; r < n; ++r) weight[order[r]] = std::sqrt(static_cast<double>(r + 1) / static_cast<double>(n));

    double lo = samples[0].loss, first = samples[order.front()].loss;
    for (const auto& s : samples) lo = std::min(lo, s.loss);
    const double k_last = std::max(samples[order.back()].step, 1.0);
    const double b2 = std::max(0.0, 0.9 * lo);
    const double b1 = 1.0 / std::max(first - b2, 1e-6);
    const double b0 = std::max(1.0 / std::max(lo - b2, 1e-6) - b1, 1e-12) / k_last;
    Eigen::VectorXd initial(3);
    initial << b0, b1, b2;
    const double inf = std::numeric_limits<double>::infinity();
    optimus_loss_fit out;
    out.bounds.lower = Eigen::Vector3d(0.0, 1e-12, 0.0);
    out.bounds.upper = Eigen::Vector3d(inf, inf, inf);
    const auto residual = [&](const Eigen::VectorXd& b, Eigen::VectorXd& r) {
        for (std::size_t i = 0; i < n; ++i)
            r(static_cast<Eigen::Index>(i)) =
                weight[i] * (1.0 / (b(0) * samples[i].step + b(1)) + b(2) - samples[i].loss);
    };
    out.fit = bounded_least_squares(residual, static_cast<Eigen::Index>(n), initial, out.bounds, options);
    out.curve = {.beta0 = out.fit.parameters(0), .beta1 = out.fit.parameters(1), .beta2 = out.fit.parameters(2)};
    std::vector<double> observed, predicted;
    for (const auto& s : samples) {
        observed.push_back(s.loss);
        predicted.push_back(out.curve.loss(s.step));
    }
    out.quality = assess_fit(observed, predicted, "samples");
    return out;
}

}  // namespace dnnplan
