# Runs elastic_advisor and checks its command-line contract: replay on the bundled and the K80
# ICAC'19 tables with both policies, advise on runtime records from stdin (both policies), the fuzz
# finding of tests/fixtures/fuzz_findings on records, and every malformed input of
# docs/solvers/elastic_advisor.md (unknown keys, a negative speed, a configuration listed twice, a
# record out of time order).
# cmake -DPROGRAM=<elastic_advisor> -DFIXTURES=<tests/fixtures/elastic> -P elastic_advisor_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")
set(work "${CMAKE_CURRENT_BINARY_DIR}/elastic_advisor_cli")
file(MAKE_DIRECTORY "${work}")

# advise_with(<records file> args...): run() with the file on stdin.
function(advise_with input)
    execute_process(COMMAND "${PROGRAM}" advise ${ARGN} INPUT_FILE "${input}"
                    RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    set(code "${code}" PARENT_SCOPE)
    set(out "${out}" PARENT_SCOPE)
    set(err "${err}" PARENT_SCOPE)
endfunction()

# ---- replay ---------------------------------------------------------------------------------------
run(replay --work-steps 64000 --deadline-s 1600 --json)
expect("replay (bundled): exit code ${code}" code EQUAL 0)
string(JSON met GET "${out}" met_deadline)
string(JSON cost GET "${out}" cost_usd)
string(JSON trials LENGTH "${out}" trials)
string(JSON final_ps GET "${out}" final ps)
string(JSON final_workers GET "${out}" final workers)
foreach(key time_s decisions_exhausted)
    string(JSON type ERROR_VARIABLE missing TYPE "${out}" ${key})
    expect("replay --json: no key ${key}" NOT missing)
endforeach()
expect("replay (bundled): deadline not met" met STREQUAL "ON")
expect("replay (bundled): ${trials} trials, expected 1-5" trials GREATER 0 AND trials LESS_EQUAL 5)
# The best with hindsight is (2 PS, 4 workers) at 1.0966 USD: within 1.10x.
expect("replay (bundled): ${cost} USD, expected <= 1.10 x 1.0966" cost LESS 1.2063)
expect("replay (bundled): final (${final_ps}, ${final_workers}), expected (2, 4)" final_ps EQUAL 2 AND final_workers EQUAL 4)
run(replay --measurements "${FIXTURES}/icac19_k80.json" --work-steps 64000 --policy dlrover)
expect("replay --policy dlrover (text): exit code ${code}" code EQUAL 0)
# K80 without a deadline: the least USD/h per step/s is (1, 7), 1.932 / 32.741 = 0.0590, against
# 0.0606 for (1, 8) and 0.0607 for (1, 6) (tests/fixtures/elastic/icac19_k80.json).
expect_printed("replay --policy dlrover" "DLRover cold start" "Best with hindsight: (ps 1, workers 7)" "deadline met")

# ---- advise ---------------------------------------------------------------------------------------
set(flags --work-steps 64000 --deadline-s 2000 --max-ps 2 --max-workers 8 --worker-usd-per-h 0.861 --ps-usd-per-h 0.1429)
file(WRITE "${work}/records.jsonl"
     "{\"time_s\": 0, \"global_step\": 0, \"speed\": 26.96, \"ps\": 1, \"workers\": 2}\n"
     "\n"
     "{\"time_s\": 120, \"global_step\": 3235, \"speed\": 38.94, \"ps\": 1, \"workers\": 4}\n")
advise_with("${work}/records.jsonl" ${flags})
expect("advise: exit code ${code}" code EQUAL 0)
string(REGEX MATCHALL "[^\n]+" plans "${out}")
list(LENGTH plans count)
expect("advise: ${count} plans, expected one per record (2)" count EQUAL 2)
list(GET plans 1 second)
string(JSON ps GET "${second}" ps)
string(JSON bottleneck GET "${second}" ps_bottleneck)
expect("advise: the second plan adds a PS (${ps}) at a PS bottleneck (${bottleneck})" ps EQUAL 2 AND bottleneck STREQUAL "ON")
set(node_ps "{\"type\": \"ps\", \"id\": 0, \"cpu_used\": 2, \"cpu_requested\": 8, \"memory_used_mb\": 1000, \"memory_requested_mb\": 4096}")
set(node_w0 "{\"type\": \"worker\", \"id\": 0, \"cpu_used\": 4, \"cpu_requested\": 8, \"memory_used_mb\": 2000, \"memory_requested_mb\": 8192}")
set(node_w1 "{\"type\": \"worker\", \"id\": 1, \"cpu_used\": 4, \"cpu_requested\": 8, \"memory_used_mb\": 2000, \"memory_requested_mb\": 8192}")
file(WRITE "${work}/nodes.jsonl"
     "{\"time_s\": 0, \"global_step\": 0, \"speed\": 10, \"ps\": 1, \"workers\": 2, \"nodes\": [${node_ps}, ${node_w0}, ${node_w1}]}\n")
advise_with("${work}/nodes.jsonl" ${flags} --policy dlrover)
expect("advise --policy dlrover: exit code ${code}" code EQUAL 0)
string(JSON workers GET "${out}" groups worker count)
# PS at 2 / 8 = 0.25 of its request: DLRover's worker plan, 2 x 0.9 / 0.25 = 7.2 -> 7.
expect("advise --policy dlrover: ${workers} workers, expected 7" workers EQUAL 7)

# The fuzz finding elastic_records-15-infeasible-with-plan (tests/fixtures/fuzz_findings/README.md):
# one record, (2, 2) at 5 steps/s, against a deadline that needs 40. It printed status infeasible
# with a plan; now infeasible, and the line is the best effort it would run: commit to the fastest,
# (2, 8), no predicted cost (tests/solve/elastic_advisor/runtime_records.cpp replays it in the library).
advise_with("${FIXTURES}/../fuzz_findings/elastic_records-15-infeasible-with-plan.jsonl"
            --work-steps 64000 --deadline-s 1600 --max-ps 2 --max-workers 8 --worker-usd-per-h 0.861 --ps-usd-per-h 0.1429)
expect("advise (elastic_records-15-infeasible-with-plan): exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON ps GET "${out}" ps)
string(JSON workers GET "${out}" workers)
string(JSON action GET "${out}" action)
string(JSON cost_type TYPE "${out}" predicted_cost_usd)
expect("advise (elastic_records-15-infeasible-with-plan): status ${status}, expected infeasible" status STREQUAL "infeasible")
expect("advise (elastic_records-15-infeasible-with-plan): ${action} (${ps}, ${workers}), expected commit (2, 8)"
       action STREQUAL "commit" AND ps EQUAL 2 AND workers EQUAL 8)
expect("advise (elastic_records-15-infeasible-with-plan): predicted_cost_usd ${cost_type}, expected NULL" cost_type STREQUAL "NULL")

# ---- malformed input --------------------------------------------------------------------------------
file(WRITE "${work}/unknown-key.json" "{\"gpu\": \"g\", \"worker_usd_per_h\": 1, \"ps_usd_per_h\": 0.1, \"speed\": 1, \"measured\": []}")
file(WRITE "${work}/negative.json"
     "{\"gpu\": \"g\", \"worker_usd_per_h\": 1, \"ps_usd_per_h\": 0.1, \"measured\": [{\"ps\": 1, \"workers\": 1, \"steps_per_s\": -3}]}")
file(WRITE "${work}/twice.json"
     "{\"gpu\": \"g\", \"worker_usd_per_h\": 1, \"ps_usd_per_h\": 0.1, \"measured\": [{\"ps\": 1, \"workers\": 1, \"steps_per_s\": 3},
       {\"ps\": 1, \"workers\": 1, \"steps_per_s\": 4}]}")
expect_malformed(
    ""
    "launch"
    "replay"
    "replay;--work-steps;-5"
    "replay;--work-steps;64000;--policy;random"
    "replay;--measurements;${work}/missing.json;--work-steps;64000"
    "advise;--work-steps;64000")
# Each malformed file names its field (expect_malformed leaves the case's stderr in err).
expect_malformed("replay;--measurements;${work}/unknown-key.json;--work-steps;64000")
expect("an unknown key names it" err MATCHES "speed")
expect_malformed("replay;--measurements;${work}/negative.json;--work-steps;64000")
expect("a negative speed names the field" err MATCHES "measured\\[0\\].steps_per_s")
expect_malformed("replay;--measurements;${work}/twice.json;--work-steps;64000")
expect("a configuration listed twice names the entry" err MATCHES "measured\\[1\\]")

file(WRITE "${work}/out-of-order.jsonl"
     "{\"time_s\": 120, \"global_step\": 0, \"speed\": 26.96, \"ps\": 1, \"workers\": 2}\n"
     "{\"time_s\": 60, \"global_step\": 3235, \"speed\": 38.94, \"ps\": 1, \"workers\": 4}\n")
file(WRITE "${work}/negative-speed.jsonl" "{\"time_s\": 0, \"global_step\": 0, \"speed\": -1, \"ps\": 1, \"workers\": 2}\n")
file(WRITE "${work}/unknown-record-key.jsonl" "{\"time_s\": 0, \"global_step\": 0, \"speed\": 1, \"ps\": 1, \"workers\": 2, \"gpu\": 1}\n")
# advise_malformed(<case>): advise on <case>.jsonl answers exit 2 with one line on stderr; leaves
# code, out and err in the caller.
function(advise_malformed case)
    advise_with("${work}/${case}.jsonl" ${flags})
    string(REGEX MATCHALL "\n" newlines "${err}")
    list(LENGTH newlines lines)
    expect("advise ${case}: exit code ${code}, expected 2" code EQUAL 2)
    expect("advise ${case}: ${lines} lines on stderr, expected 1" lines EQUAL 1)
    set(code "${code}" PARENT_SCOPE)
    set(out "${out}" PARENT_SCOPE)
    set(err "${err}" PARENT_SCOPE)
endfunction()
advise_malformed(out-of-order)
expect("a record out of time order names the field and the line" err MATCHES "line 2" AND err MATCHES "time_s")
advise_malformed(negative-speed)
string(LENGTH "${out}" printed)
expect("advise: a negative speed prints nothing" printed EQUAL 0)
expect("advise: a negative speed names the field" err MATCHES "speed")
advise_malformed(unknown-record-key)
expect("advise: an unknown key names it" err MATCHES "gpu")
