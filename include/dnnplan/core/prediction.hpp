#pragma once
// Predicted figures of one cluster (counts per instance type) for an asynchronous PS job.

#include <cstdint>
#include <string>
#include <vector>

namespace dnnplan {

/// Instance counts, one entry per instance type, in catalog order.
using cluster_counts = std::vector<std::int32_t>;

/// A named count, as reported in results.
struct type_count {
    std::string name{};
    std::int32_t count = 0;
    friend bool operator==(const type_count&, const type_count&) = default;
};

/// Everything the spotDNN models predict for one cluster (see docs/models/).
struct cluster_prediction {
    std::int64_t workers = 0;                 ///< n
    double iterations_per_s = 0.0;            ///< 1 / T_exp, eq. (2)
    double samples_per_s = 0.0;               ///< cluster speed v, eq. (2)
    double expected_iteration_time_s = 0.0;   ///< T_exp, eq. (2)
    double wa_batch = 0.0;                    ///< weighted-average batch b_w, eq. (4)
    double convergence_coefficient = 0.0;     ///< R, eq. (5)
    double normalized_iterations = 0.0;       ///< j at which the loss reaches the target, eq. (3)
    double training_time_s = 0.0;             ///< T = j * T_exp, eq. (1)
    double usd_per_h = 0.0;                   ///< price of the workers (and the PS, if priced)
    double billed_s = 0.0;                    ///< T rounded up to the billing increment
    double cost_usd = 0.0;                    ///< eq. (11) on the billed time
};

}  // namespace dnnplan
