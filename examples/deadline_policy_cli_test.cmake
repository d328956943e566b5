# Runs deadline_policy and checks its command-line contract: simulate the worked figures of
# docs/solvers/deadline_policy.md (greedy, Uniform Progress and the optimum on us-west-2a) as JSON,
# compare with an SVG, decide on the fixture observation, the same trace read as CSV and as Can't Be
# Late's JSON, the polarity flag, and malformed command lines and files (exit 2, one line).
# cmake -DPROGRAM=<deadline_policy> -DFIXTURES=<tests/fixtures/spot_availability> -P deadline_policy_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")
set(work "${CMAKE_CURRENT_BINARY_DIR}/deadline_policy_cli")
file(MAKE_DIRECTORY "${work}")
set(full "${FIXTURES}/aws-2023-02-15")
set(west --trace "${full}/us-west-2a_v100_1.csv" --prices "${full}/v100_spot_prices.json" --on-demand-usd-per-h 3.06)

# ---- simulate: the worked figures ----------------------------------------------------------------
# policy;window;the figure to the micro-dollar, as bounds (CMake compares numbers as doubles).
foreach(row "greedy;0;138.2354995;138.2355005" "greedy;1;103.1793745;103.1793755" "uniform-progress;0;69.9464995;69.9465005"
            "uniform-progress;1;86.8364245;86.8364255" "optimal;0;61.9407745;61.9407755" "optimal;1;69.0514495;69.0514505")
    list(GET row 0 policy)
    list(GET row 1 window)
    list(GET row 2 low)
    list(GET row 3 high)
    run(simulate ${west} --work-h 48 --deadline-h 60 --changeover-h 0.2 --policy ${policy} --start-ticks 0,5000 --json)
    expect("simulate --policy ${policy}: exit code ${code}" code EQUAL 0)
    string(JSON cost GET "${out}" windows ${window} cost_usd)
    string(JSON met GET "${out}" windows ${window} met)
    string(JSON tick GET "${out}" windows ${window} start_tick)
    math(EXPR start "${window} * 5000")
    expect("simulate --policy ${policy}: window ${window} starts at ${tick}" tick EQUAL start)
    expect("simulate --policy ${policy}: window ${window} costs ${cost} USD, expected [${low}, ${high}]"
           cost GREATER_EQUAL low AND cost LESS_EQUAL high)
    expect("simulate --policy ${policy}: window ${window} missed its deadline" met STREQUAL "ON")
endforeach()
foreach(key start_tick cost_usd finish_h met spot_h on_demand_h changeovers region_moves)
    string(JSON type ERROR_VARIABLE missing TYPE "${out}" windows 0 ${key})
    expect("simulate --json: no key ${key}" NOT missing)
endforeach()
run(simulate ${west} --work-h 48 --deadline-h 60 --changeover-h 0.2 --start-ticks 0:10000:5000)
expect("simulate (default, text): exit code ${code}" code EQUAL 0)
expect_printed("simulate (default, text)" "Policy default" "start" "10000")

# The same slice read as CSV and as Can't Be Late's JSON: the same windows.
set(slice --work-h 4 --deadline-h 6 --changeover-h 0.1 --spot-usd-per-h 0.918 --on-demand-usd-per-h 3.06 --start-ticks 0,100 --json)
run(simulate --trace "${FIXTURES}/us-west-2a_v100_1.csv" ${slice})
expect("simulate (CSV slice): exit code ${code}" code EQUAL 0)
set(from_csv "${out}")
run(simulate --trace "${FIXTURES}/us-west-2a_v100_1.json" ${slice})
expect("simulate (JSON slice): exit code ${code}" code EQUAL 0)
expect("simulate: the CSV and the JSON form of a trace disagree" out STREQUAL from_csv)
# Read as counting preempted probes, the same file has spot where it had none.
run(simulate --trace "${FIXTURES}/us-west-2a_v100_1.csv" ${slice} --counts preempted)
expect("simulate --counts preempted: exit code ${code}" code EQUAL 0)
expect("simulate --counts preempted: the polarity changed nothing" NOT out STREQUAL from_csv)

# ---- compare -------------------------------------------------------------------------------------
run(compare ${west} --work-h 48 --deadline-h 70 --changeover-h 0.2 --start-ticks 0:15000:5000 --threads 2 --svg "${work}/compare.svg" --json)
expect("compare: exit code ${code}" code EQUAL 0)
string(JSON n LENGTH "${out}" policies)
expect("compare: ${n} policies, expected 5" n EQUAL 5)
foreach(i RANGE 4)
    string(JSON missed GET "${out}" policies ${i} missed)
    string(JSON policy GET "${out}" policies ${i} policy)
    expect("compare: ${policy} missed ${missed} deadlines" missed EQUAL 0)
    if(policy STREQUAL "optimal")
        string(JSON ratio GET "${out}" policies ${i} mean_ratio)
        expect("compare: the optimum's ratio is ${ratio}" ratio EQUAL 1)
    endif()
endforeach()
file(READ "${work}/compare.svg" svg)
string(FIND "${svg}" "<svg" at)
expect("compare --svg: no SVG written" NOT at EQUAL -1)

# ---- decide --------------------------------------------------------------------------------------
run(decide "${FIXTURES}/observation.json")
expect("decide: exit code ${code}" code EQUAL 0)
foreach(key status action region reason)
    string(JSON value ERROR_VARIABLE missing GET "${out}" ${key})
    expect("decide: no key ${key}" NOT missing)
endforeach()
string(JSON action GET "${out}" action)
expect("decide: action ${action}" action MATCHES "^(wait|spot|on_demand)$")

# ---- malformed input ------------------------------------------------------------------------------
file(WRITE "${work}/bad_order.csv" "date,availability\n2023-02-15 22:08:16,1\n2023-02-15 22:08:10,1\n")
file(WRITE "${work}/bad_count.json" "{\"metadata\": {\"gap_seconds\": 195}, \"data\": [1, -1]}")
file(WRITE "${work}/bad_prices.json" "{\"us-west-2a_v100_1\": [0.9, 0]}")
set(job --work-h 1 --deadline-h 2 --changeover-h 0.1 --spot-usd-per-h 1 --on-demand-usd-per-h 3 --start-ticks 0)
expect_malformed(
    "simulate;--trace;${work}/bad_order.csv;${job}"
    "simulate;--trace;${work}/bad_count.json;${job}"
    "simulate;--trace;${FIXTURES}/us-west-2a_v100_1.csv;--prices;${work}/bad_prices.json;--work-h;1;--deadline-h;2;--changeover-h;0.1;--on-demand-usd-per-h;3;--start-ticks;0"
    "simulate;--trace;${FIXTURES}/us-west-2a_v100_1.csv;--work-h;1;--deadline-h;2;--changeover-h;0.1;--start-ticks;0"
    "simulate;--trace;${FIXTURES}/us-west-2a_v100_1.csv;${job};--policy;cheapest"
    "simulate;--trace;${FIXTURES}/us-west-2a_v100_1.csv;--work-h;1;--deadline-h;2;--changeover-h;0.1;--spot-usd-per-h;1;--on-demand-usd-per-h;3;--start-ticks;299"
    "compare;--trace;${FIXTURES}/us-west-2a_v100_1.csv;${job};--counts;sometimes"
    "decide;${work}/bad_count.json")
run(simulate --trace "${work}/bad_order.csv" ${job})
string(FIND "${err}" "line 3" at)
expect("malformed CSV: the error does not name line 3" NOT at EQUAL -1)
