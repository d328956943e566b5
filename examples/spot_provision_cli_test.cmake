# Runs the spot_provision program and checks its command-line contract.
# cmake -DPROGRAM=<spot_provision> -DFIXTURES=<tests/fixtures/spot_provision> -P spot_provision_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

# A malformed problem: one line on stderr naming the field, exit 2, nothing on stdout.
function(expect_rejected file field)
    expect_malformed("${FIXTURES}/${file}")
    string(FIND "${err}" "${field}" at)
    expect("${file}: stderr does not name ${field}" NOT at EQUAL -1)
endfunction()

# Bundled problem, readable table: the plan, the baseline, the plan under preemptions (P and the
# cheapest plan with P >= 0.9 on Bamboo's p3 trace) and with the runtime policy's on-demand
# fallback (P = 1; tests/solve/spot_provision/preemptions.cpp checks the fallback's arithmetic).
run()
expect("bundled problem: exit code ${code}" code EQUAL 0)
expect_printed("bundled problem" "Plan: optimal" "p2.xlarge" "g3.8xlarge" "Sliding-window baseline" "Saving over the baseline"
               "Under preemptions (every type lost and replaced as in Bamboo's p3 spot trace" "the plan finishes by the deadline with P = 0.38"
               "the cheapest plan found with P >= 0.9: 2 x p2.xlarge, 5 x g3.8xlarge, E[cost] 3.3743 USD"
               "With the runtime policy (on spot; the whole mix on-demand at the last moment it still meets the deadline"
               "the cheapest plan found: 2 x p2.xlarge, 5 x g3.8xlarge, E[cost] 3.3813 USD (P = 1.00")

# ./scripts/plan's problem (examples/data/resnet110_loss075.json): the exact search beats the
# sliding window, whose windows of types sorted by speed cannot hold the cheap g4dn.4xlarge without
# the dearer g3.16xlarge ranked between them.
run("${FIXTURES}/../../../examples/data/resnet110_loss075.json")
expect("loss 0.75 problem: exit code ${code}" code EQUAL 0)
expect_printed("loss 0.75 problem" "cost 4.1864 USD" "cost 4.9130 USD" "Saving over the baseline: 0.7266 USD (14.8%)")

# --json: only the result, and it is the artifact's plan for (0.8, 2400 s).
run(--json)
expect("--json: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
json_count(p2 "${out}" p2.xlarge)
json_count(g3 "${out}" g3.8xlarge)
json_count(p28 "${out}" p2.8xlarge)
expect("--json: status ${status}" status STREQUAL "optimal")
expect("--json: plan ${p2} ${g3} ${p28}, expected 2 x p2.xlarge + 4 x g3.8xlarge" p2 EQUAL 2 AND g3 EQUAL 4 AND p28 EQUAL 0)
foreach(key training_time_s cost_usd normalized_iterations wa_batch convergence_coefficient)
    string(JSON value ERROR_VARIABLE missing GET "${out}" plan prediction ${key})
    expect("--json: no ${key}" NOT missing)
endforeach()

# Infeasible: a status with the reason and the fastest plan's time, exit 0; no plan, and the
# fastest plan (which misses the deadline) as best_effort.
run("${FIXTURES}/infeasible_deadline.json" --json)
expect("infeasible: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON limit GET "${out}" limit)
string(JSON reason GET "${out}" reason)
string(JSON plan TYPE "${out}" plan)
string(JSON fastest GET "${out}" details fastest_training_time_s)
string(JSON effort_time GET "${out}" best_effort prediction training_time_s)
expect("infeasible: status ${status}" status STREQUAL "infeasible")
expect("infeasible: limit ${limit}" limit STREQUAL "none")
expect("infeasible: a plan ${plan}" plan STREQUAL "NULL")
string(FIND "${reason}" "fastest plan" at)
expect("infeasible: the reason does not give the fastest plan" NOT at EQUAL -1)
expect("infeasible: fastest time ${fastest} is not above the deadline" fastest GREATER 300)
expect("infeasible: best_effort's time ${effort_time} is not the fastest ${fastest}" effort_time EQUAL fastest)

# The table names the best-effort plan on one line, for the plan and the baseline.
run("${FIXTURES}/infeasible_deadline.json")
expect("infeasible table: exit code ${code}" code EQUAL 0)
expect_printed("infeasible table" "Plan: infeasible (no cluster in the search space meets the goals"
               "best effort (misses the deadline): 2 x p2.xlarge, 5 x g3.8xlarge, 8 x g3.16xlarge; training time 1921.0 s"
               "Sliding-window baseline (spotDNN Algorithm 1): no_plan_found (")

# A node budget that stops the searches: the status with its limit, the best plan so far.
file(READ "${FIXTURES}/infeasible_deadline.json" problem)
string(JSON problem SET "${problem}" goals deadline_s 2400)
string(JSON problem SET "${problem}" options "{\"budget\": {\"max_nodes\": 50}}")
set(budget_file "${CMAKE_CURRENT_BINARY_DIR}/spot_provision_cli_test_budget.json")
file(WRITE "${budget_file}" "${problem}")
run("${budget_file}")
expect("budget: exit code ${code}" code EQUAL 0)
expect_printed("budget" "Plan: feasible, limit: nodes (the node budget (max_nodes = 50) ran out after 50 nodes and"
               "Sliding-window baseline (spotDNN Algorithm 1): no_plan_found, limit: nodes (the node budget")
run("${budget_file}" --json)
string(JSON status GET "${out}" status)
string(JSON limit GET "${out}" limit)
string(JSON value GET "${out}" objective_value)
string(JSON bound GET "${out}" bound)
expect("budget --json: status ${status}, limit ${limit}" status STREQUAL "feasible" AND limit STREQUAL "nodes")
expect("budget --json: bound ${bound} above the value ${value}" bound LESS value)

# The re-plan keeps the running instance.
run("${FIXTURES}/replan_existing.json" --json)
json_count(kept "${out}" p2.8xlarge)
expect("re-plan: dropped the existing p2.8xlarge" kept GREATER_EQUAL 1)

expect_rejected(non_integer_quota.json "catalog.instances[0].quota")
expect_rejected(missing_gamma3.json "profile.loss.gamma3")
expect_rejected(truncated.json "parse error at byte")

# An unknown option and a missing file: the same one line on stderr and exit 2.
expect_malformed(--no-such-flag /nonexistent/problem.json)
