# Runs vm_recommend and checks its command-line contract: the table, --json, --pareto, --svg, a
# problem from a file, an infeasible problem, a search stopped by its node budget, and malformed
# input.
# cmake -DPROGRAM=<vm_recommend> -DFIXTURES=<tests/fixtures/vm_recommend> -P vm_recommend_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

# The bundled problem (ResNet-50 on ImageNet, 90 epochs in 12 h, EC2 Table III types): a
# recommendation with its figures.
run()
expect("default: exit code ${code}" code EQUAL 0)
expect_printed(default "status: optimal" "recommended:" "g4dn.12xlarge (spot)" "samples/s" "USD/h" "samples per USD"
               "training time" "cost")

# --json: only the result object; the bundled problem's answer is optimal, meets the deadline and
# prices at the spot rate.
run(--json)
expect("--json: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON method GET "${out}" details method)
string(JSON offers LENGTH "${out}" plan offers)
string(JSON kind GET "${out}" plan offers 0 kind)
string(JSON time_s GET "${out}" plan figures time_s)
string(JSON cost GET "${out}" plan figures cost_usd)
string(JSON value GET "${out}" objective_value)
string(JSON bound GET "${out}" bound)
string(JSON nodes GET "${out}" counters nodes)
string(JSON frontier LENGTH "${out}" details frontier)
expect("--json: status ${status}" status STREQUAL "optimal")
expect("--json: method ${method}" method STREQUAL "exact")
expect("--json: ${offers} offers" offers GREATER 0)
expect("--json: kind ${kind}" kind STREQUAL "spot")
expect("--json: time ${time_s} s over the 12 h deadline" time_s LESS_EQUAL 43200)
expect("--json: cost ${cost} is not the objective ${value}" cost EQUAL value)
expect("--json: bound ${bound} is not the optimal value ${value}" bound EQUAL value)
expect("--json: ${nodes} nodes" nodes GREATER 0)
expect("--json: a frontier without --pareto (${frontier} points)" frontier EQUAL 0)
foreach(key status limit figures estimate reason plan objective_value bound best_effort counters details)
    string(JSON type ERROR_VARIABLE missing TYPE "${out}" ${key})
    expect("--json: no key ${key}" NOT missing)
endforeach()
string(JSON limit GET "${out}" limit)
expect("--json: limit ${limit}" limit STREQUAL "none")
foreach(key method frontier frontier_status frontier_limit frontier_counters)
    string(JSON type ERROR_VARIABLE missing TYPE "${out}" details ${key})
    expect("--json: no key details.${key}" NOT missing)
endforeach()

# --pareto --json: the frontier, fastest first, the recommendation on it.
run(--pareto --json)
expect("--pareto --json: exit code ${code}" code EQUAL 0)
string(JSON frontier_status GET "${out}" details frontier_status)
string(JSON points LENGTH "${out}" details frontier)
string(JSON first_time GET "${out}" details frontier 0 figures time_s)
math(EXPR last "${points} - 1")
string(JSON last_time GET "${out}" details frontier ${last} figures time_s)
expect("--pareto: frontier status ${frontier_status}" frontier_status STREQUAL "optimal")
expect("--pareto: ${points} points" points GREATER 2)
expect("--pareto: not fastest first (${first_time} then ${last_time})" first_time LESS last_time)

# --pareto: the table, one row per point of a small problem (7 on-demand configurations).
run("${FIXTURES}/small.json" --pareto)
expect("small --pareto: exit code ${code}" code EQUAL 0)
expect_printed("small --pareto" "recommended: 2 x g4dn.12xlarge (on_demand)" "Pareto frontier (optimal): 7 configurations"
               "time h" "cost USD" "4 x g4dn.12xlarge (on_demand) + 4 x g4dn.4xlarge (on_demand)")
string(REGEX MATCHALL "\n  [1-7] +[0-9]" rows "${out}")
list(LENGTH rows row_count)
expect("small --pareto: ${row_count} frontier rows, expected 7" row_count EQUAL 7)

# --svg: a plot of the frontier (implies --pareto): one circle per point plus the ring, axes.
set(svg "${CMAKE_CURRENT_BINARY_DIR}/vm_recommend_cli_test.svg")
file(REMOVE "${svg}")
run("${FIXTURES}/small.json" --svg "${svg}")
expect("--svg: exit code ${code}" code EQUAL 0)
expect("--svg: no file ${svg}" EXISTS "${svg}")
file(READ "${svg}" drawing)
string(REGEX MATCHALL "<circle " circles "${drawing}")
list(LENGTH circles circle_count)
string(FIND "${drawing}" "</svg>" closed)
string(FIND "${drawing}" "training time (h)" x_axis)
string(FIND "${drawing}" "cost to finish the work (USD)" y_axis)
expect("--svg: ${circle_count} circles, expected 8" circle_count EQUAL 8)
expect("--svg: not closed" NOT closed EQUAL -1)
expect("--svg: no x axis label" NOT x_axis EQUAL -1)
expect("--svg: no y axis label" NOT y_axis EQUAL -1)
expect_printed("--svg" "frontier plot written to")

# Without work: max_throughput under a budget, the frontier asked for in the file's options.
run("${FIXTURES}/no_work.json")
expect("no work: exit code ${code}" code EQUAL 0)
expect_printed("no work" "objective max_throughput" "at most 6.00 USD/h" "Pareto frontier (optimal): 19 configurations"
               "samples/s")

# An infeasible deadline: status infeasible with the reason, exit 0.
run("${FIXTURES}/infeasible.json")
expect("infeasible: exit code ${code}" code EQUAL 0)
expect_printed(infeasible "status: infeasible" "reason: no configuration")
run("${FIXTURES}/infeasible.json" --json)
string(JSON status GET "${out}" status)
string(JSON best TYPE "${out}" plan)
string(JSON bound TYPE "${out}" bound)
expect("infeasible --json: status ${status}" status STREQUAL "infeasible")
expect("infeasible --json: best ${best}" best STREQUAL "NULL")
expect("infeasible --json: bound ${bound}" bound STREQUAL "NULL")

# A node budget that stops both searches: the status with its limit, the best plan so far
# (feasible) or none (no_plan_found), the proven bound, and the frontier's status and limit.
file(READ "${FIXTURES}/small.json" small)
set(budget_file "${CMAKE_CURRENT_BINARY_DIR}/vm_recommend_cli_test_budget.json")
string(JSON budgeted SET "${small}" options "{\"budget\": {\"max_nodes\": 5}, \"pareto\": true}")
file(WRITE "${budget_file}" "${budgeted}")
run("${budget_file}")
expect("budget 5: exit code ${code}" code EQUAL 0)
expect_printed("budget 5" "status: feasible, limit: nodes (exact, 5 nodes"
               "reason: the node budget (max_nodes = 5) ran out after 5 nodes and" "recommended:"
               "the optimum is at least" "Pareto frontier (feasible, limit: nodes)")
run("${budget_file}" --json)
string(JSON status GET "${out}" status)
string(JSON limit GET "${out}" limit)
string(JSON value GET "${out}" objective_value)
string(JSON bound GET "${out}" bound)
string(JSON frontier_status GET "${out}" details frontier_status)
string(JSON frontier_limit GET "${out}" details frontier_limit)
expect("budget 5 --json: status ${status}, limit ${limit}" status STREQUAL "feasible" AND limit MATCHES "^nodes$")  # nodes: also a variable here
expect("budget 5 --json: bound ${bound} above the value ${value}" bound LESS value)
expect("budget 5 --json: frontier ${frontier_status}, limit ${frontier_limit}"
       frontier_status STREQUAL "feasible" AND frontier_limit MATCHES "^nodes$")
string(JSON budgeted SET "${small}" options "{\"budget\": {\"max_nodes\": 2}}")
file(WRITE "${budget_file}" "${budgeted}")
run("${budget_file}")
expect("budget 2: exit code ${code}" code EQUAL 0)
expect_printed("budget 2" "status: no_plan_found, limit: nodes (exact, 2 nodes"
               "reason: the node budget (max_nodes = 2) ran out after 2 nodes and")

# Malformed command lines and files: one line on stderr, exit 2, nothing on stdout.
expect_malformed("--colour" "--svg" "--svg;--json" "/nonexistent.json" "a.json;b.json" "${FIXTURES}/truncated.json"
                 "${FIXTURES}/unknown_key.json" "${FIXTURES}/unknown_gpu.json" "${FIXTURES}/negative_beta.json"
                 "${FIXTURES}/string_batch.json" "${FIXTURES}/README.md")

# The errors name the field.
run("${FIXTURES}/unknown_gpu.json")
string(FIND "${err}" "workload.instance_gpu_types.g4dn.4xlarge" at)
expect("unknown gpu: the error does not name workload.instance_gpu_types.g4dn.4xlarge" NOT at EQUAL -1)
run("${FIXTURES}/negative_beta.json")
string(FIND "${err}" "workload.gpu_types.T4.beta_c_s" at)
expect("negative beta: the error does not name workload.gpu_types.T4.beta_c_s, as the 0.1 file spells it" NOT at EQUAL -1)
run("${FIXTURES}/unknown_key.json")
string(FIND "${err}" "colour" at)
expect("unknown key: the error does not name colour" NOT at EQUAL -1)
