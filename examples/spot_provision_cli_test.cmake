# Runs the spot_provision program and checks its command-line contract.
# cmake -DPROGRAM=<spot_provision> -DFIXTURES=<tests/fixtures/spot_provision> -P spot_provision_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

# A malformed problem: one line on stderr naming the field, exit 2, nothing on stdout.
function(expect_rejected file field)
    expect_malformed("${FIXTURES}/${file}")
    string(FIND "${err}" "${field}" at)
    expect("${file}: stderr does not name ${field}" NOT at EQUAL -1)
endfunction()

# Bundled problem, readable table: the plan and the baseline.
run()
expect("bundled problem: exit code ${code}" code EQUAL 0)
expect_printed("bundled problem" "Plan: optimal" "p2.xlarge" "g3.8xlarge" "Sliding-window baseline" "Saving over the baseline")

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

# Infeasible: a status with the reason and the fastest plan's time, exit 0.
run("${FIXTURES}/infeasible_deadline.json" --json)
expect("infeasible: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON reason GET "${out}" reason)
string(JSON fastest GET "${out}" details fastest_training_time_s)
expect("infeasible: status ${status}" status STREQUAL "infeasible")
string(FIND "${reason}" "fastest plan" at)
expect("infeasible: the reason does not give the fastest plan" NOT at EQUAL -1)
expect("infeasible: fastest time ${fastest} is not above the deadline" fastest GREATER 300)

# The re-plan keeps the running instance.
run("${FIXTURES}/replan_existing.json" --json)
json_count(kept "${out}" p2.8xlarge)
expect("re-plan: dropped the existing p2.8xlarge" kept GREATER_EQUAL 1)

expect_rejected(non_integer_quota.json "catalog.instances[0].quota")
expect_rejected(missing_gamma3.json "profile.loss.gamma3")
expect_rejected(truncated.json "parse error at byte")

# An unknown option and a missing file: the same one line on stderr and exit 2.
expect_malformed(--no-such-flag /nonexistent/problem.json)
